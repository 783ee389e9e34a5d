"""Starting a rewardhub service (and other helper processes) for a caller: a trainer, a script.

A caller needs a service on loopback for its first run to be one command. This module starts one
without the caller importing the service's code (``rewardhub.api``, ``rewardhub.execution``):

- :class:`ServiceProcess`: ``rewardhub serve`` as a child process, waited for until ``/readyz``
  answers. Request handling (parsing and validating a batch, running inline verifiers,
  serialising results) then never competes with the caller's own Python for one interpreter
  lock; for a trainer, it is the faster choice. The kernel ends the child when the caller dies.
- :class:`ServiceThread`: the same service in a thread of the caller's process (the service's
  code is then loaded into the caller, inside :meth:`ServiceThread.start` and nowhere else).
- :class:`WorkerProcess`: a child process from the fork server that does not re-run the caller's
  ``__main__`` (what :class:`rewardhub.background.RewardProcess` runs its client in).

What is here imports nothing of the service at module level (``tests/test_layering.py`` keeps it so).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from rewardhub.processes import WorkerProcess, die_with_parent

__all__ = ["ServiceProcess", "ServiceThread", "WorkerProcess", "free_port"]


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServiceProcess:
    """``with ServiceProcess(workers=1) as url:`` runs ``rewardhub serve`` as a child process on loopback.

    The child reads the same ``REWARDHUB_*`` environment as this process; ``config_file`` and
    ``workers`` are passed as flags. ``start`` returns once ``/readyz`` answers 200 (pools warm); the
    child's log goes to a temporary file, quoted if it fails to start.
    """

    def __init__(
        self, workers: int | None = None, config_file: str | None = None, startup_timeout_s: float = 60.0
    ) -> None:
        self.port = free_port()
        self.workers = workers
        self.config_file = config_file
        self.startup_timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> str:
        command = [sys.executable, "-m", "rewardhub.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        command += ["--workers", str(self.workers)] if self.workers else []
        command += ["--config", self.config_file] if self.config_file else []
        env = {**os.environ, "REWARDHUB_LOG_LEVEL": os.environ.get("REWARDHUB_LOG_LEVEL", "warning")}
        self._process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent()
        )
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._ready():
            if self._process.poll() is not None or time.monotonic() > deadline:
                tail = self._log_tail()
                self.stop()
                raise RuntimeError(f"rewardhub serve did not start; its log ends with:\n{tail}")
            time.sleep(0.1)
        return self.url

    def _ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/readyz", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    def _log_tail(self, size: int = 2000) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-size:]

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()  # uvicorn shuts down gracefully on SIGTERM, pools included
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        self._log.close()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServiceThread:
    """``with ServiceThread(workers=1) as url:`` runs the service on loopback in a thread of this process.

    The same arguments as :class:`ServiceProcess`. Nothing else to start or stop, at the price of
    sharing this interpreter (and its lock) with the service's request handling.
    """

    def __init__(
        self, workers: int | None = None, config_file: str | None = None, startup_timeout_s: float = 60.0
    ) -> None:
        self.workers = workers
        self.config_file = config_file
        self.startup_timeout_s = startup_timeout_s
        self.host = "127.0.0.1"
        self.port = free_port()
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _settings(self) -> Any:
        """The service's settings: the environment and ``config_file``, with this port and worker count."""
        from rewardhub.settings import Settings

        return Settings.load(self.config_file, workers=self.workers, host=self.host, port=self.port)

    def start(self) -> str:
        # The one place a caller's process loads the service's own code: a service in this
        # thread is that code. Imported here, so that importing the launcher never does.
        import uvicorn

        from rewardhub.api.app import create_app

        config = uvicorn.Config(
            create_app(self._settings()), host=self.host, port=self.port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="rewardhub-embedded", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("embedded rewardhub server failed to start")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _die_with_parent() -> Callable[[], None] | None:
    """A pre-exec hook: the child gets SIGTERM when its parent dies. A trainer killed with SIGKILL
    (or by the out-of-memory killer) runs no clean-up, and its ``rewardhub serve`` child would
    otherwise live on, holding its port and worker processes."""
    return die_with_parent(signal.SIGTERM, os.getpid())


# --- worker processes from a fork server, without re-running the caller's __main__ -----------------
#
# multiprocessing's fork server (like spawn) re-imports the parent's main script in every child, so
# a trainer script that starts a service at top level, without an ``if __name__ == "__main__"``
# guard, would recursively start services in its own workers. These workers need nothing from
# ``__main__`` (their target lives in an importable module), so this process class drops the
# main-module entries from the preparation data; everything else is the standard fork-server launch.
