"""``session_tests`` is a verifier like any other: listed by ``GET /v1/verifiers`` with its version,
routed by the one score pipeline (a sample naming a session is judged in that session, in order with
the other samples), usable inside a ``sum`` and in ``/v1/jobs``; what cannot be judged (no session,
an ended one, another key's) is a per-sample ``error``, never a 0. And ``/metrics`` counts the
sessions. One real service for the module: the verifier runs in the code pool's worker process and
reaches the session through the service."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from serve_support import needs_bubblewrap

from rewardhub.server import EmbeddedServer
from rewardhub.sessions import key_owner
from rewardhub.verifier import CALLER_FIELD

PER_KEY = 3
ADDS = "python3 -c 'from solution import add; assert add(2, 3) == 5'"
TESTS = {"name": "session_tests", "config": {"command": ADDS}}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    needs_bubblewrap()
    os.environ["REWARDHUB_SESSION_MAX_PER_KEY"] = str(PER_KEY)  # read when the first session opens
    try:
        with EmbeddedServer(workers=1, api_keys=["key-a", "key-b", "key-m"]) as served:
            yield served
    finally:
        del os.environ["REWARDHUB_SESSION_MAX_PER_KEY"]


@pytest.fixture(scope="module")
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=120, headers={"Authorization": "Bearer key-a"}) as client:
        yield client


def _session(http: httpx.Client, body: str) -> str:
    answer = http.post("/v1/sessions", json={"files": {"solution.py": body}})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


@pytest.fixture(scope="module")
def good(http: httpx.Client) -> str:
    return _session(http, "def add(a, b):\n    return a + b\n")


@pytest.fixture(scope="module")
def bad(http: httpx.Client) -> str:
    return _session(http, "def add(a, b):\n    return a - b\n")


def test_session_tests_is_listed_with_its_version(http):
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    entry = listed["session_tests"]
    assert (entry["kind"], entry["version"], entry["cacheable"]) == ("code", "1", False)
    assert "command" in entry["config_schema"]["required"]


def test_a_sample_naming_a_session_is_judged_by_its_tests(http, good, bad):
    samples = [
        {"id": "good", "response": "done", "verifier": TESTS, "metadata": {"session": good}},
        {"id": "plain", "response": "42", "verifier": "exact", "reference": "42"},
        {"id": "bad", "response": "done", "verifier": TESTS, "metadata": {"session": bad}},
        {"id": "none", "response": "done", "verifier": TESTS},
        {"id": "gone", "response": "done", "verifier": TESTS, "metadata": {"session": "s-00000000-0123456789abcdef"}},
    ]
    results = http.post("/v1/score", json={"samples": samples}).json()["results"]
    assert [r["id"] for r in results] == ["good", "plain", "bad", "none", "gone"]
    assert [(r["score"], r["status"]) for r in results[:3]] == [(1.0, "ok"), (1.0, "ok"), (0.0, "ok")]
    assert results[0]["details"]["verdict_key"]["verifier"] == "session_tests"
    assert results[2]["details"]["verdict"] == "runtime_error" and "AssertionError" in results[2]["details"]["stderr"]
    assert results[3]["status"] == "error" and "metadata.session" in results[3]["error"]
    assert results[4]["status"] == "error" and "earlier run" in results[4]["error"]


def test_a_group_of_samples_of_one_session_take_turns(http, good):
    slow = {"name": "session_tests", "config": {"command": "sleep 0.2 && " + TESTS["config"]["command"]}}
    samples = [{"response": "done", "verifier": slow, "metadata": {"session": good}, "group": "g"}] * 4
    results = http.post("/v1/score", json={"samples": samples}).json()["results"]
    assert [(r["score"], r["status"]) for r in results] == [(1.0, "ok")] * 4  # none of them "busy"


def test_a_session_command_missing_from_the_config_is_a_422(http, good):
    sample = {"response": "x", "verifier": "session_tests", "metadata": {"session": good}}
    answer = http.post("/v1/score", json={"samples": [sample]})
    assert answer.status_code == 422, answer.text


def test_session_tests_inside_a_sum(http, good, bad):
    composite = {"sum": [{"verifier": TESTS, "weight": 1.0}, {"verifier": "exact", "weight": 0.5}]}
    samples = [
        {"response": "ok", "reference": "ok", "verifier": composite, "metadata": {"session": good}},
        {"response": "ok", "reference": "ok", "verifier": composite, "metadata": {"session": bad}},
    ]
    results = http.post("/v1/score", json={"samples": samples}).json()["results"]
    assert [(r["score"], r["status"]) for r in results] == [(1.5, "ok"), (0.5, "ok")]
    assert results[0]["details"]["verdict_key"]["verifier"] == "sum"


def test_session_tests_in_a_job(http, good):
    body = {"verifier": TESTS, "samples": [{"response": "done", "metadata": {"session": good}}]}
    accepted = http.post("/v1/jobs", json=body)
    assert accepted.status_code == 202, accepted.text
    deadline = time.monotonic() + 120
    while (state := http.get(f"/v1/jobs/{accepted.json()['job_id']}").json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, state
        time.sleep(0.05)
    [result] = state["results"]
    assert (state["status"], result["score"], result["status"]) == ("done", 1.0, "ok")


def test_another_keys_session_cannot_be_judged_even_naming_its_owner(http, good):
    # key-b names key-a's session, and writes a grant for key-a where the service writes the caller's
    forged_grant = {"owner": key_owner("key-a"), "host": "@elsewhere", "expires": 9e9, "ticket": "0" * 64}
    forged = {"session": good, CALLER_FIELD: forged_grant}
    sample = {"response": "x", "verifier": TESTS, "metadata": forged}
    other = {"Authorization": "Bearer key-b"}
    [result] = http.post("/v1/score", json={"samples": [sample]}, headers=other).json()["results"]
    assert result["status"] == "error" and "no session" in result["error"]


def _session_metrics(http: httpx.Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = http.get("/metrics").text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        if family.name.startswith(("rewardhub_session", "rewardhub_sessions"))
        for sample in family.samples
    }


def test_metrics_count_sessions_calls_ends_and_refusals(http, good, bad):
    before = _session_metrics(http)
    mine = {"Authorization": "Bearer key-m"}
    made = [http.post("/v1/sessions", json={}, headers=mine) for _ in range(PER_KEY + 1)]
    assert [answer.status_code for answer in made] == [201] * PER_KEY + [429]
    ran = http.post(f"/v1/sessions/{made[0].json()['id']}/run", json={"code": "x = 1"}, headers=mine)
    assert ran.json()["status"] == "ok"
    for answer in made[:PER_KEY]:
        assert http.delete(f"/v1/sessions/{answer.json()['id']}", headers=mine).status_code == 204
    after = _session_metrics(http)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after[key] - before.get(key, 0.0)

    assert grew("rewardhub_sessions_created_total") == PER_KEY
    assert grew("rewardhub_sessions_rejected_total", reason="key_full") == 1
    assert grew("rewardhub_sessions_rejected_total", reason="rate") == 0
    assert grew("rewardhub_sessions_ended_total", reason="deleted") == PER_KEY
    assert grew("rewardhub_sessions_ended_total", reason="expired") == 0
    assert grew("rewardhub_session_calls_total") == 1
    assert grew("rewardhub_session_call_seconds_count") == 1
    assert grew("rewardhub_session_call_seconds_bucket", le="+Inf") == 1
    assert grew("rewardhub_sessions_live") == 0  # made and deleted
    assert after[("rewardhub_sessions_live", ())] >= 2  # the module's good and bad sessions
