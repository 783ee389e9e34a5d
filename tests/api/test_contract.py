"""The v1 contract of API.md, answered by a real service with worker processes."""

from __future__ import annotations

import httpx


def score(http: httpx.Client, samples: list[dict], verifier: object = None) -> list[dict]:
    body: dict = {"samples": samples}
    if verifier is not None:
        body["verifier"] = verifier
    response = http.post("/v1/score", json=body)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_healthz_answers_ok(http: httpx.Client) -> None:
    answer = http.get("/healthz").json()
    assert answer["status"] == "ok"
    assert isinstance(answer["pid"], int)  # names the API process that answered (one of --api-workers N)


def test_readyz_is_200_once_pools_run(http: httpx.Client) -> None:
    response = http.get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "ready"


def test_verifiers_lists_builtins_with_config_schemas(http: httpx.Client) -> None:
    verifiers = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    for name in ("exact", "choice", "format", "length", "test_sleepy"):
        assert name in verifiers
    exact = verifiers["exact"]
    assert exact["kind"] == "rule"
    assert exact["description"]
    assert "case_sensitive" in exact["config_schema"]["properties"]


def test_results_come_back_in_sample_order_with_ids(http: httpx.Client) -> None:
    samples = [{"id": str(i), "response": str(i), "reference": "3"} for i in range(8)]
    results = score(http, samples, "exact")
    assert [r["id"] for r in results] == [str(i) for i in range(8)]
    assert [r["score"] for r in results] == [1.0 if i == 3 else 0.0 for i in range(8)]
    assert all(r["status"] == "ok" and r["error"] is None for r in results)


def test_a_samples_own_verifier_overrides_the_requests(http: httpx.Client) -> None:
    samples = [
        {"response": "A", "reference": "a"},
        {"response": "A", "reference": "a", "verifier": {"name": "exact", "config": {"case_sensitive": True}}},
    ]
    assert [r["score"] for r in score(http, samples, "exact")] == [1.0, 0.0]


def test_weighted_sum_reports_each_component(http: httpx.Client) -> None:
    exact = {"name": "exact", "config": {"strip_think": False}}
    spec = {"sum": [{"verifier": exact, "weight": 0.75}, {"verifier": "format", "weight": 0.25}]}
    [result] = score(http, [{"response": "<think>hm</think> 42", "reference": "42"}], spec)
    assert result["score"] == 0.25  # the format is right; the exact match sees the think block
    components = result["details"]["components"]
    assert components["exact"]["weight"] == 0.75 and components["format"]["score"] == 1.0


def test_gate_zeroes_the_score_unless_the_gate_passes(http: httpx.Client) -> None:
    spec = {"gate": "format", "then": {"name": "exact", "config": {"strip_think": True}}}
    good, bad = score(
        http,
        [
            {"response": "<think>sum</think>42", "reference": "42"},
            {"response": "42", "reference": "42"},
        ],
        spec,
    )
    assert (good["score"], good["details"]["gate"]) == (1.0, "open")
    assert (bad["score"], bad["details"]["gate"]) == (0.0, "closed")


def test_pool_verifiers_run_in_worker_processes(http: httpx.Client) -> None:
    results = score(http, [{"response": "x"} for _ in range(40)], "test_pid")
    pids = {r["details"]["pid"] for r in results}
    assert len(pids) == 2  # the batch was split across both workers


def test_jobs_run_in_the_background_and_report_progress(http: httpx.Client) -> None:
    response = http.post("/v1/jobs", json={"verifier": "exact", "samples": [{"response": "a", "reference": "a"}] * 10})
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    for _ in range(200):
        state = http.get(f"/v1/jobs/{job_id}").json()
        if state["status"] == "done":
            break
    assert state["status"] == "done"
    assert state["progress"] == {"done": 10, "total": 10}
    assert [r["score"] for r in state["results"]] == [1.0] * 10


def test_unknown_job_is_404(http: httpx.Client) -> None:
    response = http.get("/v1/jobs/nope")
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found"


def test_get_reward_speaks_openrlhf(http: httpx.Client) -> None:
    body = {"query": ["Q: 2+2? 4", "Q: 2+2? 5"], "prompts": ["Q: 2+2? ", "Q: 2+2? "], "labels": ["4", "4"]}
    response = http.post("/get_reward", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["rewards"] == [1.0, 0.0]
    assert answer["scores"] == [1.0, 0.0]
    assert answer["status"] == ["ok", "ok"]


def test_get_reward_accepts_one_sample_per_request(http: httpx.Client) -> None:
    response = http.post("/get_reward", json={"query": "P 7", "prompts": "P ", "labels": "7"})
    assert response.json()["rewards"] == [1.0]


def test_metrics_expose_requests_latency_and_queue_depth(http: httpx.Client) -> None:
    score(http, [{"response": "a", "reference": "a"}], "exact")
    text = http.get("/metrics").text
    assert 'rewardhub_requests_total{code="200",route="/v1/score"}' in text
    assert 'rewardhub_verifier_seconds_bucket{le="0.001",verifier="exact"}' in text
    assert "rewardhub_queue_depth" in text
    assert 'rewardhub_samples_total{status="ok",verifier="exact"}' in text
