"""A manager with small limits and a client of the session routes, shared by the session tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from serve_support import needs_bubblewrap
from session_support import SMALL, session_app

from rewardhub.sessions import SessionManager


@pytest.fixture(scope="module")
def manager() -> Iterator[SessionManager]:
    needs_bubblewrap()
    sessions = SessionManager(SMALL)
    yield sessions
    sessions.close()


@pytest.fixture(scope="module")
def client(manager: SessionManager) -> TestClient:
    return TestClient(session_app(manager), headers={"Authorization": "Bearer key-a"})
