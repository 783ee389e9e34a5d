"""A manager with small limits and a client of the session routes, shared by the session tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from session_support import SMALL, session_app

from rewardhub.sandbox import SandboxUnavailable
from rewardhub.sandbox.bwrap import find_bwrap
from rewardhub.sandbox.sessions import SessionManager


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
