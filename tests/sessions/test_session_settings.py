"""A service's sessions follow the ``sessions`` section of its settings tree.

The session host used to read ``REWARDHUB_SESSION_*`` itself when its first session opened, so a cap
given by a flag or a config file never reached it; it is now built from the tree the app was
created with, whatever the environment says.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from serve_support import needs_bubblewrap

from rewardhub.api.app import create_app
from rewardhub.settings import Settings

KEY = {"Authorization": "Bearer key-a"}


def test_the_cap_per_key_is_the_apps_not_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_bubblewrap()
    monkeypatch.setenv("REWARDHUB_SESSION_MAX_PER_KEY", "5")
    settings = Settings.load(api_keys=["key-a"], sessions={"max_per_key": 1, "spares": 0})
    client = TestClient(create_app(settings))
    first = client.post("/v1/sessions", json={}, headers=KEY)
    try:
        assert first.status_code == 201, first.text
        second = client.post("/v1/sessions", json={}, headers=KEY)
        assert second.status_code == 429, second.text
        assert "1" in second.json()["error"]["message"]
    finally:
        client.delete(f"/v1/sessions/{first.json()['session_id']}", headers=KEY)
