"""What the session tests share: small host limits, an app with only the session routes, and that
app served on a real port in a thread (for callers that speak HTTP)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import uvicorn
from fastapi import FastAPI

from rewardhub.api import session_routes
from rewardhub.api.errors import install_error_handlers
from rewardhub.sandbox.sessions import SessionManager, SessionSettings
from rewardhub.server import free_port

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
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(session_app(manager), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the session app did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
