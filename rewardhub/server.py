"""Running the service in this process: in the foreground under uvicorn (``rewardhub serve``), or in a thread.

- :func:`serve`: what ``rewardhub serve`` runs.
- :class:`EmbeddedServer`: the full service (API and local pools) on a free loopback port in a
  thread of this process; nothing else to start or stop, and what the tests of this package use.

Callers (a trainer, a script) start a service through :mod:`rewardhub.launcher` instead, which
imports none of the service's code until it must.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn

from rewardhub.api.app import create_app
from rewardhub.launcher import free_port
from rewardhub.settings import Settings

__all__ = ["EmbeddedServer", "free_port", "serve"]


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
