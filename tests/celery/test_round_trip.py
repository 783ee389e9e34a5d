"""``execution: celery`` answers exactly what the embedded engine answers, chunk by chunk, in order."""

from __future__ import annotations

import asyncio

import httpx
import redis
from celery_support import REDIS_DB, CeleryService

from rewardhub.execution.celery_executor import CeleryExecutor
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.types import Sample

# Every way a sample can end: ok, wrong, timeout, crash, exception, memory, group, composite, inline.
MIXED_REQUEST = [
    {"id": "ok", "response": "0", "verifier": "test_sleepy"},
    {
        "id": "slow",
        "response": "30",
        "verifier": {"name": "test_sleepy", "config": {"timeout_s": 0.5, "failure_score": -1.0}},
    },
    {"id": "crash", "response": "crash", "verifier": "test_crash"},
    {"id": "survivor", "response": "fine", "verifier": "test_crash"},
    {"id": "boom", "response": "x", "verifier": "test_boom"},
    {"id": "hog", "response": "x", "verifier": "test_hog"},
    {"id": "g1a", "response": "a", "group": "g1", "verifier": "test_group_size"},
    {"id": "g1b", "response": "b", "group": "g1", "verifier": "test_group_size"},
    {"id": "g2", "response": "c", "group": "g2", "verifier": "test_group_size"},
    {"id": "exact", "response": "42", "reference": "42", "verifier": "exact"},
    {"id": "wrong", "response": "41", "reference": "42", "verifier": "exact"},
    {
        "id": "escalated",
        "response": "7",
        "reference": "7",
        "verifier": {"name": "test_wrong", "config": {"escalate_to": "exact"}},
    },
    {
        "id": "sum",
        "response": "<think>x</think>42",
        "reference": "42",
        "verifier": {"sum": [{"verifier": "format", "weight": 0.5}, {"verifier": "test_sleepy", "weight": 0.5}]},
    },
    {
        "id": "trajectory",
        "messages": [
            {"role": "user", "content": "2+2?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c", "function": {"name": "add", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c", "content": "4"},
            {"role": "assistant", "content": "4"},
        ],
        "reference": {"turns": [[{"add": {}}], []]},
        "verifier": {"name": "steps", "config": {"turn": {"name": "tool_call"}}},
    },
]


MEASURED = ("pid", "elapsed_ms", "address_space_mb", "address_space_peak_mb")


def comparable(value: object) -> object:
    """A result without what legitimately differs between runs: timings, process ids, memory measured."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def score(url: str, samples: list[dict], **extra: object) -> list[dict]:
    response = httpx.post(f"{url}/v1/score", json={"samples": samples, **extra}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_the_same_request_gets_the_same_results_as_local_mode(celery_service: CeleryService, service_url: str) -> None:
    # the sum's test_sleepy leaf sleeps for the response's number of seconds: give it one
    samples = [s if s["id"] != "sum" else {**s, "response": "0"} for s in MIXED_REQUEST]
    score(
        service_url, [{"response": "0", "verifier": "test_sleepy"}] * 4
    )  # the local pool's first calls pay its start-up
    local = [comparable(r) for r in score(service_url, samples)]
    celery = [comparable(r) for r in score(celery_service.url, samples)]
    assert celery == local
    statuses = {r["id"]: r["status"] for r in celery}  # type: ignore[index]
    assert statuses["slow"] == "timeout" and statuses["crash"] == "error" and statuses["hog"] == "error"
    assert next(r for r in celery if r["id"] == "trajectory")["steps"] == [1.0, 1.0]  # type: ignore[index]


def test_a_crashing_verifier_costs_its_sample_an_error_not_the_batch(celery_service: CeleryService) -> None:
    samples = [{"response": r, "verifier": "test_crash"} for r in ["ok", "crash", "ok", "ok", "ok", "crash"]]
    results = score(celery_service.url, samples)
    assert [r["status"] for r in results] == ["ok", "error", "ok", "ok", "ok", "error"]
    assert "worker process died" in results[1]["error"]


def test_a_batch_is_split_across_workers_and_reassembled_in_order(celery_service: CeleryService) -> None:
    samples = [{"id": str(i), "response": "0.05", "verifier": "test_sleepy"} for i in range(24)]
    results = score(celery_service.url, samples)
    assert [r["id"] for r in results] == [str(i) for i in range(24)]
    assert all(r["status"] == "ok" for r in results)
    assert len({r["details"]["pid"] for r in results}) == 2  # one call-pool process per worker


def test_progress_is_reported_per_chunk(celery_service: CeleryService) -> None:
    settings = celery_service.settings
    registry = Registry.load(settings.plugins)
    progress: list[int] = []

    async def run() -> list:
        executor = CeleryExecutor(settings, registry)
        await executor.start()
        try:
            scorer = Scorer(registry, executor, settings)
            samples = [Sample(response="0", verifier="test_sleepy") for _ in range(10)]
            return await scorer.score(samples, on_progress=progress.append)
        finally:
            await executor.close()

    results = asyncio.run(run())
    assert [r.status for r in results] == ["ok"] * 10
    assert sorted(progress) == [2, 4, 4]  # chunk_size 4: three chunks, each reported once


def test_results_live_in_the_result_backend_with_a_retention_time(celery_service: CeleryService) -> None:
    client = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    before = set(client.scan_iter("celery-task-meta-*", count=1000))
    score(celery_service.url, [{"response": "0", "verifier": "test_sleepy"}])
    keys = set(client.scan_iter("celery-task-meta-*", count=1000)) - before
    assert keys
    ttls = [client.ttl(key) for key in keys]
    assert all(0 < ttl <= celery_service.settings.result_ttl_s for ttl in ttls)


def test_readiness_reports_ready_with_workers_on_the_cpu_queue(celery_service: CeleryService) -> None:
    response = httpx.get(f"{celery_service.url}/readyz")
    assert response.status_code == 200, response.text
