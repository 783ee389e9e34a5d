"""What the session tests share: small host limits, an app with only the session routes, and that
app served on a real port in a thread (for callers that speak HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from fastapi import FastAPI
from serve_support import in_thread

from rewardhub.api import session_routes
from rewardhub.api.errors import install_error_handlers
from rewardhub.sandbox.sessions import SessionManager, SessionSettings

SMALL = SessionSettings(
    max_sessions=48, max_per_key=32, create_rate_per_s=50, create_burst=50, idle_ttl_s=60, reap_interval_s=0.2, spares=1
)


def session_app(manager: SessionManager) -> FastAPI:
    app = FastAPI()
    app.state.settings = SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap")
    app.state.service = SimpleNamespace(auth=lambda request: None)
    app.state.sessions = manager
    install_error_handlers(app)
    app.include_router(session_routes.router)
    return app


@contextmanager
def served(manager: SessionManager) -> Iterator[str]:
    """The session routes on a free local port, in a thread of this process; the URL."""
    with in_thread(session_app(manager)) as url:
        yield url
