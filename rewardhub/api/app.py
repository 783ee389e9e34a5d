"""The FastAPI application: routes, error handlers, metrics, and the engine's lifetime."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from rewardhub.api import audit_routes, docs_routes, sandbox_routes, session_routes
from rewardhub.api.compat import ROUTERS as COMPAT_ROUTERS
from rewardhub.api.errors import install_error_handlers
from rewardhub.api.hot_routes import HotRoutes
from rewardhub.api.metrics import MetricsMiddleware
from rewardhub.api.request_id import RequestIdMiddleware
from rewardhub.api.routes import protected, public
from rewardhub.api.run_tag import RunTagMiddleware
from rewardhub.api.service import build_service
from rewardhub.execution import Executor
from rewardhub.logging import configure_logging
from rewardhub.registry import Registry
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sessions import LocalSessions, SessionClient, SessionHost
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
    host = None
    service = build_service(settings, registry, executor)
    sessions: LocalSessions | SessionClient | Any  # Any: celery_sessions.CelerySessions (celery is an extra)
    pinned = getattr(service.executor, "sessions", None)  # execution: celery holds them on session workers
    if pinned is not None:
        sessions, session_grant = pinned, pinned.grant
    elif session_host is None:
        host = SessionHost(sandbox=SandboxSettings(backend=settings.sandbox_backend))
        sessions, session_grant = host.local, host.grant
    else:
        sessions = SessionClient(*session_host)
        session_grant = sessions.grant
    service.metrics.watch_sessions(sessions.stats)

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
            await asyncio.to_thread(host.close if host is not None else sessions.close)

    # FastAPI's own /docs, /redoc and /openapi.json answer anyone: ours follow the keys (docs_routes)
    app = FastAPI(title="rewardhub", version="1", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service
    app.state.settings = settings
    app.state.sessions = sessions
    app.state.session_grant = session_grant  # what a sample judged in a session carries (session_host.grant)
    install_error_handlers(app)
    app.include_router(public)
    app.include_router(protected)
    app.include_router(sandbox_routes.router)
    app.include_router(session_routes.router)
    app.include_router(audit_routes.router)
    app.include_router(docs_routes.router)
    for router in COMPAT_ROUTERS:  # OpenRLHF, slime, graders, NeMo-Gym, SandboxFusion, ORS: rewardhub.api.compat
        app.include_router(router)
    if settings.ui_enabled:
        from rewardhub.ui.routes import router as ui_router

        app.include_router(ui_router)
    app.add_middleware(HotRoutes, service=service)  # innermost: after ours, before FastAPI's
    app.add_middleware(MetricsMiddleware, metrics=service.metrics)
    app.add_middleware(RunTagMiddleware)
    app.add_middleware(RequestIdMiddleware)
    return app
