"""Everything a request handler needs, built once per app and torn down with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from rewardhub.api.auth import Authenticator
from rewardhub.api.metrics import Metrics
from rewardhub.api.pipeline import ScorePipeline
from rewardhub.execution import Executor, create_executor
from rewardhub.jobs.journals import open_job_journal
from rewardhub.jobs.store import JobStore
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.ui.recorder import StatsRecorder
from rewardhub.ui.store import open_store

__all__ = ["Service", "ServiceDep", "build_service"]


@dataclass
class Service:
    settings: Settings
    registry: Registry
    executor: Executor
    pipeline: ScorePipeline
    jobs: JobStore
    metrics: Metrics
    auth: Authenticator
    stats: StatsRecorder | None = None
    started: bool = False


def build_service(settings: Settings, registry: Registry | None = None, executor: Executor | None = None) -> Service:
    registry = registry or Registry.load(settings.plugins)
    executor = executor or create_executor(settings, registry)
    metrics = Metrics()
    metrics.watch_queue(executor.queue_depth)
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
        stats=stats,
    )


# Dependencies are coroutines on purpose: FastAPI runs plain functions in a thread pool, which
# costs more than the whole of a single-sample exact-match request.
async def get_service(request: Request) -> Service:
    return request.app.state.service


async def require_key(request: Request) -> None:
    request.app.state.service.auth(request)


ServiceDep = Annotated[Service, Depends(get_service)]
