"""POST /v1/score with samples that name a session: judged in it, in order with the other samples."""

from __future__ import annotations

import pytest
from fastapi import Request
from fastapi.testclient import TestClient
from session_support import session_app

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.schemas import ScoreRequest, ScoreResponse
from rewardhub.api.session_scoring import score_with_sessions
from rewardhub.types import Result


class OtherVerifiers:
    """The score pipeline's place: every sample it gets scores 0.5 (so a 0.5 says who judged it)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def score(self, samples, default, run, cache):
        self.seen += [s.id for s in samples]
        return [Result(id=s.id, score=0.5) for s in samples]


@pytest.fixture
def scoring(manager):
    pipeline = OtherVerifiers()
    app = session_app(manager)

    @app.post("/v1/score")
    async def score(request: Request) -> ScoreResponse:
        body = parse_body(await read_body(request, 1 << 20), ScoreRequest)
        return ScoreResponse(results=await score_with_sessions(request, pipeline, body), elapsed_ms=0.0)

    return TestClient(app, headers={"Authorization": "Bearer key-a"}), pipeline


def test_a_sample_naming_a_session_is_judged_by_its_tests(scoring):
    client, pipeline = scoring
    good = client.post("/v1/sessions", json={"files": {"solution.py": "def add(a, b):\n    return a + b\n"}}).json()[
        "id"
    ]
    bad = client.post("/v1/sessions", json={"files": {"solution.py": "def add(a, b):\n    return a - b\n"}}).json()[
        "id"
    ]
    tests = {
        "name": "session_tests",
        "config": {"command": "python3 -c 'from solution import add; assert add(2, 3) == 5'"},
    }
    samples = [
        {"id": "good", "response": "done", "verifier": tests, "metadata": {"session": good}},
        {"id": "plain", "response": "42", "verifier": "exact", "reference": "42"},
        {"id": "bad", "response": "done", "verifier": tests, "metadata": {"session": bad}},
        {"id": "none", "response": "done", "verifier": tests},
        {"id": "gone", "response": "done", "verifier": tests, "metadata": {"session": "s-00000000-0123456789abcdef"}},
    ]
    results = client.post("/v1/score", json={"samples": samples}).json()["results"]
    assert [r["id"] for r in results] == ["good", "plain", "bad", "none", "gone"]
    assert [(r["score"], r["status"]) for r in results[:3]] == [(1.0, "ok"), (0.5, "ok"), (0.0, "ok")]
    assert results[2]["details"]["verdict"] == "runtime_error" and "AssertionError" in results[2]["details"]["stderr"]
    assert results[3]["status"] == "error" and "metadata.session" in results[3]["error"]
    assert results[4]["status"] == "error" and "earlier run" in results[4]["error"]
    assert pipeline.seen == ["plain"]


def test_another_keys_session_cannot_be_judged(scoring):
    client, _ = scoring
    session = client.post("/v1/sessions", json={}).json()["id"]
    sample = {
        "response": "x",
        "verifier": {"name": "session_tests", "config": {"command": "true"}},
        "metadata": {"session": session},
    }
    [result] = client.post("/v1/score", json={"samples": [sample]}, headers={"Authorization": "Bearer key-b"}).json()[
        "results"
    ]
    assert result["status"] == "error" and "no session" in result["error"]
