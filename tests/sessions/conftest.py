"""An app with the session routes and a manager with small limits, shared by the session tests."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from rewardhub.api import session_routes
from rewardhub.api.errors import install_error_handlers
from rewardhub.sandbox import SandboxUnavailable
from rewardhub.sandbox.bwrap import find_bwrap
from rewardhub.sandbox.sessions import SessionManager, SessionSettings

SMALL = SessionSettings(
    max_sessions=16, max_per_key=8, create_rate_per_s=50, create_burst=50, idle_ttl_s=60, reap_interval_s=0.2
)


def session_app(manager: SessionManager) -> FastAPI:
    app = FastAPI()
    app.state.settings = SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap")
    app.state.service = SimpleNamespace(auth=lambda request: None)
    app.state.sessions = manager
    install_error_handlers(app)
    app.include_router(session_routes.router)
    return app


@pytest.fixture(scope="module")
def manager() -> Iterator[SessionManager]:
    try:
        find_bwrap("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"no bubblewrap on this machine: {exc.message}")
    sessions = SessionManager(SMALL)
    yield sessions
    sessions.close()


@pytest.fixture(scope="module")
def client(manager: SessionManager) -> TestClient:
    return TestClient(session_app(manager), headers={"Authorization": "Bearer key-a"})
