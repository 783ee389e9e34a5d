"""ORS episodes are judged in a fresh sandbox by default: ``submit`` runs the task's ``test_command``
where the model never was, on the task's ``artifacts`` (or, for a task that names none, the regular
files of its working directory, less dot files, links and startup hooks). A task may still ask for
``"verify": "in_session"``; a task whose artifacts cannot be judged is refused when it is created."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from session_support import session_service

from rewardhub.api.compat import ors
from rewardhub.api.errors import install_error_handlers
from rewardhub.sessions import SessionManager

WRONG = "printf 'def add(a, b):\\n    return a - b\\n' > solution.py"
RIGHT = "printf 'def add(a, b):\\n    return a + b\\n' > solution.py"
GRADE = {"grade.py": "from solution import add\nif add(2, 3) == 5:\n    open('reward.txt', 'w').write('1')\n"}
GRADED = {"test_command": 'python3 grade.py; test "$(cat reward.txt)" = 1', "test_files": GRADE}
CHECKED = {"test_command": "python3 -c 'from solution import add; assert add(2, 3) == 5'"}


@pytest.fixture(scope="module")
def client(manager: SessionManager) -> Iterator[TestClient]:
    app = FastAPI()
    app.state.service = session_service(manager)
    install_error_handlers(app)
    app.include_router(ors.router)
    with TestClient(app, headers={"X-API-Key": "ors-key"}) as test_client:
        yield test_client


def _answer(events: str) -> dict:
    chunks, event = [], None
    for line in events.splitlines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and event in ("chunk", "end"):
            chunks.append(line.partition(":")[2].removeprefix(" "))
    assert chunks, events
    return json.loads("".join(chunks))


def _episode(client: TestClient, sid: str, task: dict, *commands: str) -> dict:
    """The ``submit`` output of an episode that ran ``commands`` with the bash tool."""
    headers = {"X-Session-ID": sid}
    created = client.post("/create", json={"task_spec": {"prompt": "Write add.", "files": {}, **task}}, headers=headers)
    assert created.status_code == 200, created.text
    try:
        for command in commands:
            ran = _answer(
                client.post("/code/call", json={"name": "bash", "input": {"command": command}}, headers=headers).text
            )
            assert ran["ok"], ran
        graded = _answer(client.post("/code/call", json={"name": "submit", "input": {}}, headers=headers).text)
        assert graded["ok"], graded
        return graded["output"]
    finally:
        client.post("/delete", headers=headers)


def test_an_episode_is_judged_fresh_by_default(client):
    output = _episode(client, "ors-fresh-right", CHECKED, RIGHT)
    assert (output["reward"], output["finished"], output["metadata"]["verification"]) == (1.0, True, "fresh")
    assert output["metadata"]["artifacts"]["copied"] == {"solution.py": 32}


def test_a_forged_reward_file_earns_nothing_when_the_task_names_its_artifacts(client):
    task = {**GRADED, "artifacts": ["solution.py"]}
    assert _episode(client, "ors-forged-fresh", task, WRONG, "echo 1 > reward.txt")["reward"] == 0.0
    assert _episode(client, "ors-forged-right", task, RIGHT)["reward"] == 1.0
    in_session = {**GRADED, "verify": "in_session"}  # the forgery pays where the task asks for the old way
    assert _episode(client, "ors-forged-in-session", in_session, WRONG, "echo 1 > reward.txt")["reward"] == 1.0


def test_without_named_artifacts_an_environment_file_and_links_stay_behind(client):
    plant_path = (
        "mkdir -p bin && printf '#!/bin/sh\\nexit 0\\n' > bin/python3 && chmod +x bin/python3"
        " && printf 'PATH=/tmp/bin:/usr/bin:/bin\\n' > .env"
    )
    task = {"test_command": "set -a; . ./.env 2>/dev/null; set +a; sh -c 'python3 check.py'"}
    task["test_files"] = {"check.py": "from solution import add\nassert add(2, 3) == 5\n"}
    output = _episode(client, "ors-env-path", task, WRONG, plant_path)
    assert output["reward"] == 0.0
    assert ".env" in output["metadata"]["artifacts"]["left_out"]
    linked = {"test_command": "cmp answer.txt expected.txt", "test_files": {"expected.txt": "5\n"}}
    assert _episode(client, "ors-link", linked, "ln -s expected.txt answer.txt")["reward"] == 0.0


@pytest.mark.parametrize(
    "task",
    [
        {**CHECKED, "artifacts": ["../escape.py"]},
        {**CHECKED, "artifacts": []},
        {**CHECKED, "artifacts": "solution.py"},
        {**CHECKED, "verify": "sometimes"},
        {**CHECKED, "verify": "in_session", "artifacts": ["solution.py"]},
    ],
)
def test_a_task_whose_verification_cannot_be_established_is_refused_at_create(client, task):
    created = client.post("/create", json={"task_spec": {"files": {}, **task}}, headers={"X-Session-ID": "ors-bad"})
    assert created.status_code == 422, created.text


def test_without_named_artifacts_a_file_the_tests_read_from_the_working_directory_travels(client):
    """What the default cannot know: a task that names no artifacts carries its working directory's
    files, so a forged ``reward.txt`` there still answers for a grader that reads it. Naming the
    artifacts is what closes it (the test above)."""
    assert _episode(client, "ors-forged-default", GRADED, WRONG, "echo 1 > reward.txt")["reward"] == 1.0
