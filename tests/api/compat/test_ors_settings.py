"""The ORS routes read the ``ors`` section of their app's settings, not the environment of the process.

The section is built with the rest of the tree (flags, ``REWARDHUB_ORS_*``, the config file), so an
app configured by a flag or a file serves what it was configured with, and two apps in one process
serve their own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rewardhub.api.app import create_app
from rewardhub.settings import Settings


def test_an_app_serves_the_ors_environment_and_tasks_it_was_configured_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps({"train": [{"prompt": "p", "files": {}, "test_command": "true"}]}))
    monkeypatch.setenv("REWARDHUB_ORS_ENVIRONMENT", "from-the-environment")
    client = TestClient(create_app(Settings.load(ors={"environment": "swe", "tasks_file": str(tasks)})))
    assert client.get("/list_environments").json() == ["swe"]
    assert client.get("/swe/splits").json() == [{"name": "train", "type": "train"}]
    assert client.get("/from-the-environment/splits").status_code == 404
