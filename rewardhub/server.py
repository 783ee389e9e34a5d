"""Running the service in this process: in the foreground under uvicorn (``rewardhub serve``), or in a thread.

- :func:`serve`: what ``rewardhub serve`` runs.
- :class:`EmbeddedServer`: the full service (API and local pools) on a free loopback port in a
  thread of this process, configured by keywords; what the tests of this package use.

Callers (a trainer, a script) start a service through :mod:`rewardhub.launcher` instead, which
imports none of the service's code until it must.
"""

from __future__ import annotations

from typing import Any

import uvicorn

from rewardhub.api.app import create_app
from rewardhub.launcher import ServiceThread, free_port
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


class EmbeddedServer(ServiceThread):
    """``with EmbeddedServer(workers=1) as url:`` runs the service on loopback in a thread.

    :class:`rewardhub.launcher.ServiceThread` with any :class:`Settings` field as a keyword (or a
    whole ``settings``), which is what tests need to start a service configured their way.
    """

    def __init__(self, settings: Settings | None = None, startup_timeout_s: float = 60.0, **overrides: Any) -> None:
        super().__init__(startup_timeout_s=startup_timeout_s)
        overrides.setdefault("port", self.port)
        overrides.setdefault("host", self.host)
        self.settings = settings.model_copy(update=overrides) if settings else Settings.load(**overrides)
        self.host, self.port = self.settings.host, self.settings.port

    def _settings(self) -> Settings:
        return self.settings
