"""The session routes served on a free local port in a thread of the test process (a whole
``rewardhub serve`` start would cost the CI more than the tests that need only these routes)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
import uvicorn
from fastapi import FastAPI

from rewardhub.api import session_routes
from rewardhub.api.errors import install_error_handlers
from rewardhub.sandbox import SandboxUnavailable
from rewardhub.sandbox.bwrap import find_bwrap
from rewardhub.sandbox.sessions import SessionManager, SessionSettings
from rewardhub.server import free_port


@contextmanager
def in_thread(app: FastAPI) -> Iterator[str]:
    """Any ASGI app on a free port, in a thread; its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def session_routes_served() -> Iterator[str]:
    try:
        find_bwrap("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"no bubblewrap on this machine: {exc.message}")
    manager = SessionManager(SessionSettings(spares=1))
    app = FastAPI()
    app.state.settings = SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap")
    app.state.service = SimpleNamespace(auth=lambda request: None)
    app.state.sessions = manager
    install_error_handlers(app)
    app.include_router(session_routes.router)
    try:
        with in_thread(app) as url:
            yield url
    finally:
        manager.close()
