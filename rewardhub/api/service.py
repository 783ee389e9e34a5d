"""Everything a request handler needs, built once per app and torn down with it.

Routes reach it through the typed dependencies of :mod:`rewardhub.api.deps`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewardhub.api.auth import Authenticator
from rewardhub.api.metrics import Metrics
from rewardhub.api.pipeline import ScorePipeline
from rewardhub.execution import Executor, create_executor
from rewardhub.jobs.journals import open_job_journal
from rewardhub.jobs.store import JobStore
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.sessions import SessionClient, SessionHost, Sessions
from rewardhub.settings import Settings
from rewardhub.ui.recorder import StatsRecorder
from rewardhub.ui.store import open_store

__all__ = ["Service", "build_service"]


@dataclass
class Service:
    settings: Settings
    registry: Registry
    executor: Executor
    pipeline: ScorePipeline
    jobs: JobStore
    metrics: Metrics
    auth: Authenticator
    sessions: Sessions
    """The service's sessions, wherever they live (:func:`open_sessions`)."""
    session_host: SessionHost | None = None
    """The host that serves :attr:`sessions` to the service's other processes, when this one holds them."""
    stats: StatsRecorder | None = None
    started: bool = False

    def close_sessions(self) -> None:
        """End the sessions this process holds (and the host serving them), or let go of the way to them."""
        if self.session_host is not None:
            self.session_host.close()
        else:
            self.sessions.close()


def open_sessions(
    settings: Settings, executor: Executor, session_host: tuple[str, str] | None = None
) -> tuple[Sessions, SessionHost | None]:
    """The service's sessions, and the host to close with the app when this process holds them.

    ``session_host``: the (address, token) of the service's session host in another process
    (``rewardhub serve --api-workers N``); None hosts the sessions here. With ``execution: celery``
    neither: each session lives on a session worker (:mod:`rewardhub.execution.celery_sessions`)."""
    pinned: Sessions | None = getattr(executor, "sessions", None)
    if pinned is not None:
        return pinned, None
    if session_host is not None:
        return SessionClient(*session_host), None
    host = SessionHost(settings.sessions, settings.sandbox)
    return host.local, host


def build_service(
    settings: Settings,
    registry: Registry | None = None,
    executor: Executor | None = None,
    session_host: tuple[str, str] | None = None,
) -> Service:
    registry = registry or Registry.load(settings.plugins)
    executor = executor or create_executor(settings, registry)
    metrics = Metrics()
    metrics.watch_queue(executor.queue_depth)
    sessions, host = open_sessions(settings, executor, session_host)
    metrics.watch_sessions(sessions.stats)
    stats = None
    if settings.ui_enabled:
        stats = StatsRecorder(
            open_store(settings),
            show_samples=settings.ui_show_samples,
            recent_limit=settings.ui_recent_samples,
            text_chars=settings.ui_sample_chars,
        )
    return Service(
        settings=settings,
        registry=registry,
        executor=executor,
        pipeline=ScorePipeline(Scorer(registry, executor, settings), executor, metrics, settings, stats),
        jobs=JobStore(
            retention_s=settings.result_ttl_s,
            journal=open_job_journal(settings, executor.job_journal()),
            max_result_bytes=settings.job_results_max_bytes,
        ),
        metrics=metrics,
        auth=Authenticator(settings.all_api_keys(), settings.rate_limit_per_s),
        sessions=sessions,
        session_host=host,
        stats=stats,
    )
