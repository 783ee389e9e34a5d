"""The session routes served on a free local port in a thread of the test process (a whole
``rewardhub serve`` start would cost the CI more than the tests that need only these routes)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from fastapi import FastAPI
from serve_support import in_thread, needs_bubblewrap

from rewardhub.api.auth import Authenticator
from rewardhub.api.errors import install_error_handlers
from rewardhub.api.routes import sessions
from rewardhub.sessions import LocalSessions, SessionManager, SessionSettings


@contextmanager
def session_routes_served() -> Iterator[str]:
    needs_bubblewrap()
    manager = SessionManager(SessionSettings(spares=1))
    app = FastAPI()
    app.state.settings = SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap")
    app.state.service = SimpleNamespace(  # the fields of rewardhub.api.service.Service these routes read
        auth=Authenticator([]),  # open: the Bearer token labels the owner
        settings=app.state.settings,
        sessions=LocalSessions(manager),
    )
    install_error_handlers(app)
    app.include_router(sessions.router)
    try:
        with in_thread(app) as url:
            yield url
    finally:
        manager.close()
