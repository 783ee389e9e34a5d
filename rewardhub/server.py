"""Running the service: under uvicorn from the CLI, or started by another program.

Both ways below are how a trainer's first run needs only one command; each starts the full
service (API and local pools) on a free loopback port:

- :class:`ServiceProcess`: ``rewardhub serve`` as a child process. Request handling (parsing and
  validating a batch, running inline verifiers, serialising results) then never competes with the
  caller's own Python for one interpreter lock; for a trainer, it is the faster choice.
- :class:`EmbeddedServer`: in a thread of the calling process; nothing else to start or stop,
  and what the tests of this package use.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from rewardhub.api.app import create_app
from rewardhub.api.job_store import celery_redis_url
from rewardhub.api.metrics import MULTIPROC_ENV
from rewardhub.logging import configure_logging
from rewardhub.settings import Settings

__all__ = ["EmbeddedServer", "ServiceProcess", "app_from_environment", "free_port", "serve"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(settings: Settings) -> None:
    """Run the service in the foreground until interrupted.

    With ``api_workers`` > 1, uvicorn's supervisor starts that many processes on the one port (each
    builds the app through :func:`app_from_environment`, with its own local pools) and restarts any
    that dies. A job submitted to one is polled through any other, so they share a job store: the
    configured ``job_store_url``, or else a sqlite file in a temporary directory that lives as long
    as this call; and their metrics are summed (prometheus_client's multiprocess mode, in the same
    directory unless ``PROMETHEUS_MULTIPROC_DIR`` is set).
    """
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level.lower(),
        "timeout_keep_alive": 30,
        "backlog": 4096,
        "log_config": None,  # our JSON logs (rewardhub.logging), with request ids
    }
    if settings.api_workers == 1:
        uvicorn.run(create_app(settings), **options)
        return
    with tempfile.TemporaryDirectory(prefix="rewardhub-serve-") as state_dir:
        if settings.job_store_url is None and celery_redis_url(settings) is None:
            settings = settings.model_copy(update={"job_store_url": f"sqlite:///{state_dir}/jobs.sqlite3"})
        # /metrics from any worker answers for all of them (rewardhub.api.metrics), unless set already
        os.environ.setdefault(MULTIPROC_ENV, str(Path(state_dir, "metrics")))
        Path(os.environ[MULTIPROC_ENV]).mkdir(exist_ok=True)
        os.environ[SETTINGS_ENV] = settings.model_dump_json()
        uvicorn.run(f"{__name__}:app_from_environment", factory=True, workers=settings.api_workers, **options)


SETTINGS_ENV = "_REWARDHUB_SERVE_SETTINGS"  # no REWARDHUB_ prefix: Settings must not read it as a field


def app_from_environment() -> Any:
    """The app factory each API worker process calls: the parent's settings, passed as JSON."""
    settings = Settings.model_validate_json(os.environ[SETTINGS_ENV])
    configure_logging(settings.log_level)
    return create_app(settings)


class EmbeddedServer:
    """``with EmbeddedServer(workers=1) as url:`` runs the service on loopback in a thread."""

    def __init__(self, settings: Settings | None = None, startup_timeout_s: float = 60.0, **overrides: Any) -> None:
        overrides.setdefault("port", free_port())
        overrides.setdefault("host", "127.0.0.1")
        self.settings = settings.model_copy(update=overrides) if settings else Settings.load(**overrides)
        self.startup_timeout_s = startup_timeout_s
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}"

    def start(self) -> str:
        config = uvicorn.Config(
            create_app(self.settings),
            host=self.settings.host,
            port=self.settings.port,
            log_level="warning",
            lifespan="on",
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


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a pre-exec hook that has the kernel send the child SIGTERM when its parent dies.

    A trainer killed with SIGKILL (or by the out-of-memory killer) runs no clean-up, and its
    ``rewardhub serve`` child would otherwise live on, holding its port and worker processes.
    The kernel ties the signal to the *thread* that started the child: start it from a thread
    that lives as long as the service should. ``prctl`` is looked up here, before the fork, so the
    hook itself only makes two system calls.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the hook ran
            os._exit(1)

    return hook


_PR_SET_PDEATHSIG = 1
