"""``rewardhub settings`` lists every key of the settings tree with its variable, default and meaning."""

from __future__ import annotations

import json

import pytest

from rewardhub.cli import main
from rewardhub.settings import ModelSettings
from rewardhub.settings_reference import settings_reference


def test_every_key_has_a_one_line_meaning() -> None:
    rows = settings_reference()
    missing = [row.key for row in rows if not row.meaning.strip() or "\n" in row.meaning]
    assert not missing, f"add a one-line description to these fields: {missing}"
    assert len({row.key for row in rows}) == len(rows)


def test_sections_are_expanded_with_their_own_prefix() -> None:
    rows = {row.key: row for row in settings_reference()}
    assert "sandbox" not in rows  # a section is not a key: its keys are
    assert rows["sandbox.backend"].env == "REWARDHUB_SANDBOX_BACKEND"
    assert rows["sessions.max_per_key"].env == "REWARDHUB_SESSION_MAX_PER_KEY"
    assert rows["ors.tasks_file"].env == "REWARDHUB_ORS_TASKS_FILE"
    assert rows["models.dir"].env == "REWARDHUB_MODELS_DIR"
    assert rows["models.vllm_cpu_kv_cache_gib"].env == "REWARDHUB_VLLM_CPU_KV_CACHE_GIB"
    assert rows["port"].env == "REWARDHUB_PORT"
    assert rows["port"].default == 8000
    assert rows["cache_statuses"].default == ["ok"]


def test_the_command_prints_a_table_of_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| key | environment variable | default | meaning |"
    body = {line.split(" | ")[0].strip("| `"): line for line in lines[2:]}
    assert set(body) == {row.key for row in settings_reference()}
    assert "`REWARDHUB_SANDBOX_BACKEND` | `bwrap` |" in body["sandbox.backend"]
    assert ModelSettings.model_fields["dir"].description in body["models.dir"]


def test_the_command_prints_json_for_machines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [entry["key"] for entry in listed] == [row.key for row in settings_reference()]
    backend = next(entry for entry in listed if entry["key"] == "sandbox.backend")
    assert backend == {
        "key": "sandbox.backend",
        "env": "REWARDHUB_SANDBOX_BACKEND",
        "default": "bwrap",
        "meaning": backend["meaning"],
    }
    assert backend["meaning"]
