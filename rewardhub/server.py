"""Running the service: under uvicorn from the CLI, or embedded in a thread of another program.

:class:`EmbeddedServer` is how a trainer's first run needs only one command: it starts the full
service (API and local pools) on a free loopback port inside the calling process.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from rewardhub.api.app import create_app
from rewardhub.settings import Settings

__all__ = ["EmbeddedServer", "free_port", "serve"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(settings: Settings) -> None:
    """Run the service in the foreground until interrupted."""
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        timeout_keep_alive=30,
        backlog=4096,
        log_config=None,  # our JSON logs (rewardhub.logging), with request ids
    )


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
            create_app(self.settings), host=self.settings.host, port=self.settings.port, log_level="warning", lifespan="on"
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
