"""Running the service in this process: in the foreground under uvicorn (``rewardhub serve``), or in a thread.

- :func:`serve`: what ``rewardhub serve`` runs.
- :class:`EmbeddedServer`: the full service (API and local pools) on a free loopback port in a
  thread of this process, configured by keywords; what the tests of this package use.

Callers (a trainer, a script) start a service through :mod:`rewardhub.launcher` instead, which
imports none of the service's code until it must.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import uvicorn

from rewardhub.api.app import create_app
from rewardhub.api.metrics import MULTIPROC_ENV
from rewardhub.jobs.journals import celery_redis_url
from rewardhub.launcher import ServiceThread, free_port
from rewardhub.logging import configure_logging
from rewardhub.processes import die_with_parent
from rewardhub.run_folder import enter_run_folder
from rewardhub.sessions import SOCKET_ENV, TOKEN_ENV, SessionHost
from rewardhub.settings import Settings, use

__all__ = ["EmbeddedServer", "app_from_environment", "free_port", "serve"]


def serve(settings: Settings) -> None:
    """Run the service in the foreground until interrupted; it leaves no temporary file behind.

    Every process of the service writes its temporary files in one folder that this process
    removes when it exits and the next start sweeps after a kill (:mod:`rewardhub.run_folder`).
    SIGTERM stops the service as SIGINT does, so that removal runs: uvicorn shuts down gracefully,
    then raises the signal again, and SIGTERM's default action would end the process there, past
    every ``finally`` and exit hook.
    """
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    use(settings)
    try:
        enter_run_folder()
        _serve(settings)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # the shell's status for a process a signal ended


def _serve(settings: Settings) -> None:
    """Run the service in the foreground until interrupted.

    With ``api_workers`` > 1, uvicorn's supervisor starts that many processes on the one port (each
    builds the app through :func:`app_from_environment`, with its own local pools) and restarts any
    that dies. A job submitted to one is polled through any other, so they share a job store: the
    configured ``job_store_url``, or else a sqlite file in a temporary directory that lives as long
    as this call; and their metrics are summed (prometheus_client's multiprocess mode, in the same
    directory unless ``PROMETHEUS_MULTIPROC_DIR`` is set). Sessions live in this process, the
    workers' parent (:class:`~rewardhub.sessions.host.SessionHost`): a session made through one
    worker is used through any, a worker that dies takes none with it, and this process killed takes
    them all (their sandboxes die with the thread that started them).
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
        os.environ[SUPERVISOR_ENV] = str(os.getpid())
        host = SessionHost(settings.sessions, settings.sandbox)
        host.export()  # the workers' apps and their pools reach the sessions through it
        try:
            uvicorn.run(f"{__name__}:app_from_environment", factory=True, workers=settings.api_workers, **options)
        finally:
            host.close()


SETTINGS_ENV = "_REWARDHUB_SERVE_SETTINGS"  # no REWARDHUB_ prefix: Settings must not read it as a field
SUPERVISOR_ENV = "_REWARDHUB_SERVE_PID"
"""The serve process above the API workers (uvicorn's supervisor, which starts them from its main thread)."""


def app_from_environment() -> Any:
    """The app factory each API worker process calls: the parent's settings, passed as JSON.

    The worker dies with the serve process above it: that process killed with SIGKILL (or by the
    out-of-memory killer) runs no clean-up, and its workers would otherwise live on as orphans,
    holding the port with their pools and warm sandboxes. SIGKILL, because the service is gone
    anyway; the pools and sandboxes die with the worker."""
    hook = die_with_parent(signal.SIGKILL, int(os.environ[SUPERVISOR_ENV]))
    if hook is not None:
        hook()
    settings = Settings.model_validate_json(os.environ[SETTINGS_ENV])
    use(settings)
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings, session_host=(os.environ[SOCKET_ENV], os.environ[TOKEN_ENV]))


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
