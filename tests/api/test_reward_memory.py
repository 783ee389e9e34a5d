"""The service's reward memory over HTTP: ``cache`` on /v1/score and jobs, its counters on /metrics,
the versions on /v1/verifiers and ``POST /v1/reverify``'s verdict diff."""

from __future__ import annotations

import re
import time
import uuid

import httpx


def _hits(http: httpx.Client) -> float:
    found = re.search(r'^rewardhub_cache_lookups_total\{outcome="hit"\} ([0-9.e+]+)$', http.get("/metrics").text, re.M)
    return float(found.group(1)) if found else 0.0


def test_verifiers_list_their_versions(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    assert isinstance(listed["exact"]["version"], str) and listed["exact"]["cacheable"] is True
    assert "response" in listed["exact"]["reads"]


def test_a_cached_request_is_served_the_stored_verdict(http: httpx.Client) -> None:
    unique = uuid.uuid4().hex  # the shared service may have cached other tests' samples
    body = {"verifier": "exact", "cache": True, "samples": [{"id": "a", "response": unique, "reference": unique}]}
    before = _hits(http)
    [first] = http.post("/v1/score", json=body).json()["results"]
    [again] = http.post("/v1/score", json=body).json()["results"]
    assert first["cached"] is False and again["cached"] is True
    assert {**again, "cached": False, "elapsed_ms": 0} == {**first, "elapsed_ms": 0}
    assert first["details"]["verdict_key"]["verifier"] == "exact"
    assert _hits(http) == before + 1
    [uncached] = http.post("/v1/score", json={**body, "cache": False}).json()["results"]
    assert uncached["cached"] is False


def test_a_job_may_ask_for_the_cache(http: httpx.Client) -> None:
    unique = uuid.uuid4().hex
    sample = {"response": unique, "reference": unique}
    http.post("/v1/score", json={"verifier": "exact", "cache": True, "samples": [sample]})
    job = http.post("/v1/jobs", json={"verifier": "exact", "cache": True, "samples": [sample]}).json()["job_id"]
    deadline = time.monotonic() + 30
    while (state := http.get(f"/v1/jobs/{job}").json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, state
        time.sleep(0.05)
    assert state["results"][0]["cached"] is True


def test_reverify_answers_the_diff(http: httpx.Client) -> None:
    key = {"verifier": "exact", "version": "0", "config_hash": "old"}
    samples = [
        {
            "id": "flip",
            "response": "Paris",
            "reference": "paris",
            "result": {"score": 0.0, "details": {"verdict_key": key}},
        },
        {
            "id": "same",
            "response": "Lyon",
            "reference": "paris",
            "result": {"score": 0.0, "details": {"verdict_key": key}},
        },
    ]
    reply = http.post("/v1/reverify", json={"verifier": "exact", "samples": samples})
    assert reply.status_code == 200, reply.text
    report = reply.json()
    assert report["n"] == 2 and report["flips"]["0->1"] == 1 and report["flipped"] == 1
    assert [e["id"] for e in report["changed"]] == ["flip"]
    missing = http.post("/v1/reverify", json={"verifier": "exact", "samples": [{"response": "x"}]})
    assert missing.status_code == 422 and "against" in missing.text


def test_get_reward_may_ask_for_the_cache(http: httpx.Client) -> None:
    unique = uuid.uuid4().hex
    body = {"query": [f"q {unique}"], "prompts": ["q "], "labels": [unique], "verifier": "exact", "cache": True}
    before = _hits(http)
    first = http.post("/get_reward", json=body).json()
    again = http.post("/get_reward", json=body).json()
    assert first["rewards"] == again["rewards"] == [1.0]
    assert _hits(http) == before + 1
