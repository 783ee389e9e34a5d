"""Execution never hangs and never loses: each failure costs only its own sample."""

from __future__ import annotations

import httpx


def run(http: httpx.Client, samples: list[dict]) -> list[dict]:
    response = http.post("/v1/score", json={"samples": samples})
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_a_sample_past_its_limit_times_out_and_the_rest_still_answer(http: httpx.Client) -> None:
    slow = {"response": "60", "verifier": {"name": "test_sleepy", "config": {"timeout_s": 1.0}}}
    quick = {"response": "0", "verifier": "test_sleepy"}
    results = run(http, [quick, slow, quick, quick, slow, quick])
    assert [r["status"] for r in results] == ["ok", "timeout", "ok", "ok", "timeout", "ok"]
    assert results[1]["score"] == 0.0 and "timed out after 1s" in results[1]["error"]


def test_timeouts_report_the_verifiers_failure_score(http: httpx.Client) -> None:
    slow = {"response": "60", "verifier": {"name": "test_sleepy", "config": {"timeout_s": 0.5, "failure_score": -1.0}}}
    [result] = run(http, [slow])
    assert (result["status"], result["score"]) == ("timeout", -1.0)


def test_a_worker_that_dies_costs_one_error_and_is_replaced(http: httpx.Client) -> None:
    samples = [{"response": r, "verifier": "test_crash"} for r in ["ok", "crash", "ok", "ok"]]
    results = run(http, samples)
    assert [r["status"] for r in results] == ["ok", "error", "ok", "ok"]
    assert "worker process died" in results[1]["error"]
    assert run(http, [{"response": "ok", "verifier": "test_crash"}])[0]["status"] == "ok"


def test_a_verifier_exception_is_an_error_status_not_a_zero(http: httpx.Client) -> None:
    [result] = run(http, [{"response": "x", "verifier": "test_boom"}])
    assert result["status"] == "error"
    assert "ValueError: verifier bug" in result["error"]


def test_a_memory_hog_hits_the_worker_limit(http: httpx.Client) -> None:
    [result] = run(http, [{"response": "x", "verifier": "test_hog"}])
    assert result["status"] == "error"
    assert "memory" in result["error"]


def test_group_verifiers_see_their_whole_group(http: httpx.Client) -> None:
    samples = [{"response": "a", "group": "g1"}] * 3 + [{"response": "b", "group": "g2"}] * 2 + [{"response": "c"}]
    results = run(http, [{**s, "verifier": "test_group_size"} for s in samples])
    assert [r["score"] for r in results] == [3, 3, 3, 2, 2, 1]


def test_a_wrong_rule_verdict_escalates_to_the_named_verifier(http: httpx.Client) -> None:
    spec = {"name": "test_wrong", "config": {"escalate_to": "exact"}}
    right, wrong = run(
        http,
        [
            {"response": "7", "reference": "7", "verifier": spec},
            {"response": "8", "reference": "7", "verifier": spec},
        ],
    )
    assert right["score"] == 1.0 and right["details"]["rule"]["score"] == 0.0
    assert right["details"]["escalation"]["score"] == 1.0
    assert wrong["score"] == 0.0 and wrong["details"]["escalation"]["score"] == 0.0
