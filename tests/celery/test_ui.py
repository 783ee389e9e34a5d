"""The operator page in Celery mode: two API processes' figures add up in Redis, and the workers'
own statistics (how many, their pools, the tasks each ran) are summed on the page."""

from __future__ import annotations

import time
import uuid

import httpx
from celery_support import CeleryService, ServiceThread


def _wait(fetch, ok, timeout_s: float = 30.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = fetch()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def test_two_apis_on_celery_share_figures_in_redis_and_show_the_workers(celery_service: CeleryService) -> None:
    settings = celery_service.settings.model_copy(update={"ui_namespace": f"test-{uuid.uuid4().hex[:8]}"})
    with ServiceThread(settings) as first, ServiceThread(settings) as second:
        for url, n in ((first.url, 6), (second.url, 4)):
            _wait(lambda u=url: httpx.get(f"{u}/readyz").status_code, lambda code: code == 200)
            answer = httpx.post(
                f"{url}/v1/score",
                json={"verifier": "test_pid", "samples": [{"response": str(i)} for i in range(n)]},
                headers={"X-Rewardhub-Run": "celery-run"},
                timeout=60,
            )
            assert answer.status_code == 200 and {r["status"] for r in answer.json()["results"]} == {"ok"}
        for url in (first.url, second.url):
            figures = _wait(
                lambda u=url: httpx.get(f"{u}/ui/api/stats").json(),
                lambda s: s["total"] == 10 and (s["workers"] or {}).get("tasks", 0) > 0,
            )
            assert figures["execution"] == "celery"
            assert figures["processes"] == 2
            assert figures["verifiers"]["test_pid"]["samples"] == 10
            assert figures["runs"]["celery-run"]["status"]["ok"] == 10
            workers = figures["workers"]
            ours = {w.hostname for w in celery_service.workers}
            assert ours <= {w["hostname"] for w in workers["each"]}
            assert workers["workers"] >= len(ours) and workers["tasks"] == sum(w["tasks"] for w in workers["each"])
            assert sum(w["tasks"] for w in workers["each"] if w["hostname"] in ours) >= 1
