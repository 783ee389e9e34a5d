"""The FastAPI application: routes, error handlers, metrics, and the engine's lifetime."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from rewardhub.api.compat import ROUTERS as COMPAT_ROUTERS
from rewardhub.api.errors import install_error_handlers
from rewardhub.api.metrics import MetricsMiddleware
from rewardhub.api.middleware.hot_routes import HotRoutes
from rewardhub.api.middleware.request_id import RequestIdMiddleware
from rewardhub.api.middleware.run_tag import RunTagMiddleware
from rewardhub.api.routes import audit, docs, health, jobs, sandbox, score, sessions, verifiers
from rewardhub.api.service import build_service
from rewardhub.execution import Executor
from rewardhub.logging import configure_logging
from rewardhub.registry import Registry
from rewardhub.settings import Settings

__all__ = ["create_app"]

log = logging.getLogger(__name__)


def create_app(
    settings: Settings | None = None,
    registry: Registry | None = None,
    executor: Executor | None = None,
    session_host: tuple[str, str] | None = None,
) -> FastAPI:
    """``session_host``: the (address, token) of the service's session host in another process
    (``rewardhub serve --api-workers N``); None hosts the sessions here. With ``execution: celery``
    neither: each session lives on a session worker (:mod:`rewardhub.execution.celery_sessions`)."""
    settings = settings or Settings.load()
    if settings.log_format is not None:  # under uvicorn --factory nothing else configures our logs
        configure_logging(settings.log_level, settings.log_format)
    service = build_service(settings, registry, executor, session_host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await service.executor.start()
        if service.stats is not None:
            service.stats.start()
        service.started = True
        # Everything built so far (modules, the registry, sympy's caches) lives as long as the
        # process: out of the collector's sight, a full collection costs microseconds instead of
        # ~100 ms, a stall every trainer's batch would otherwise wait out now and then.
        gc.freeze()
        log.info("rewardhub ready: %d verifiers, execution=%s", len(service.registry.names()), settings.execution)
        try:
            yield
        finally:
            service.started = False
            await service.jobs.close()
            await service.executor.close()
            if service.stats is not None:
                await asyncio.to_thread(service.stats.close)
            await asyncio.to_thread(service.close_sessions)

    # FastAPI's own /docs, /redoc and /openapi.json answer anyone: ours follow the keys (routes.docs)
    app = FastAPI(title="rewardhub", version="1", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service  # what the routes' dependencies read (rewardhub.api.deps)
    app.state.settings = settings  # the compatibility routers that take a test's app without a service
    install_error_handlers(app)
    for resource in (health, verifiers, score, jobs, sandbox, sessions, audit, docs):  # rewardhub.api.routes
        app.include_router(resource.router)
    for router in COMPAT_ROUTERS:  # OpenRLHF, slime, graders, NeMo-Gym, SandboxFusion, ORS: rewardhub.api.compat
        app.include_router(router)
    if settings.ui_enabled:
        from rewardhub.api.routes import ui

        app.include_router(ui.router)
    app.add_middleware(HotRoutes, service=service)  # innermost: after ours, before FastAPI's
    app.add_middleware(MetricsMiddleware, metrics=service.metrics)
    app.add_middleware(RunTagMiddleware)
    app.add_middleware(RequestIdMiddleware)
    return app
