"""Nothing is lost: workers killed mid-batch, poison samples, crashing verifiers.

Every test here runs real worker processes against a real broker and kills them for real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import redis
from celery_support import (
    REDIS_DB,
    ServiceThread,
    Worker,
    celery_settings,
    rabbit_url,
    redis_result_url,
    start_worker,
    start_workers,
    stop_workers,
)
from kombu import Connection, Queue

from rewardhub.execution.celery_app import QUEUES, broker_options
from rewardhub.settings import Settings

SLOW_SAMPLES = [{"id": str(i), "response": "0.2", "verifier": "test_sleepy"} for i in range(8)]
SLOWER_SAMPLES = [{"id": str(i), "response": "1.5", "verifier": "test_sleepy"} for i in range(8)]


def ledger_keys(client: redis.Redis) -> set[bytes]:
    return set(client.scan_iter("rewardhub:chunk:*:deliveries", count=1000))


def deliveries(client: redis.Redis, keys: set[bytes]) -> list[int]:
    """How often each of these chunks has been delivered (the workers' ledger in Redis)."""
    return [int(client.get(key) or 0) for key in keys]


def holds_an_unanswered_chunk(client: redis.Redis, worker: Worker) -> bool:
    """True while ``worker`` is scoring a chunk: it claimed the chunk's latest delivery, began it
    (the delivery ledger counted it) and has stored no result yet. Killing it now loses that
    chunk. (Counting ledger keys is not enough: the other worker may have begun them all; and a
    claim alone is made when the message arrives, before the delivery begins.)"""
    for key in client.scan_iter("rewardhub:chunk:*:attempt", count=1000):
        task_id = client.get(key)
        if task_id is None or client.get(f"rewardhub:task:{task_id.decode()}:worker") != worker.hostname.encode():
            continue
        begun = client.exists(key.decode().removesuffix(":attempt") + ":deliveries")
        if begun and not client.exists(f"celery-task-meta-{task_id.decode()}"):
            return True
    return False


def wait_until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def a_worker_scoring_a_chunk(client: redis.Redis, workers: list[Worker], timeout_s: float = 30) -> Worker:
    """The first of ``workers`` seen scoring a chunk. Either will do: on a loaded machine one worker
    can take every chunk of the batch before the other consumes, so waiting for a chosen one can
    outlast the batch."""
    deadline = time.monotonic() + timeout_s
    while True:
        for worker in workers:
            if holds_an_unanswered_chunk(client, worker):
                return worker
        if time.monotonic() > deadline:
            raise AssertionError("no worker was seen scoring a chunk in time")
        time.sleep(0.05)


def score_in_background(url: str, samples: list[dict]) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        out["response"] = httpx.post(f"{url}/v1/score", json={"samples": samples}, timeout=120)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def kill_one_worker_mid_batch(
    settings: Settings, tmp: Path, samples: list[dict] = SLOW_SAMPLES
) -> tuple[list[dict], list[int]]:
    """Two workers take chunks of a batch; one is kill -9'd (with its children) while it runs one."""
    ledger = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    before = ledger_keys(ledger)
    workers: list[Worker] = start_workers(settings, tmp, 2)
    try:
        with ServiceThread(settings) as service:
            thread, out = score_in_background(service.url, samples)
            a_worker_scoring_a_chunk(ledger, workers).kill_tree()
            thread.join(timeout=90)
            response = out["response"]
            assert response.status_code == 200, response.text
            return response.json()["results"], deliveries(ledger, ledger_keys(ledger) - before)
    finally:
        stop_workers(workers)


def test_kill_9_a_worker_mid_batch_and_every_sample_still_gets_its_result(redis_up: None, tmp_path: Path) -> None:
    # Redis's default visibility timeout (an hour): the API sees the worker's liveness key expire
    # and dispatches its chunk again; the broker would hand it back only after the hour
    settings = celery_settings("kill", sample_timeout_s=1.0, max_timeout_s=1.0, chunk_size=2)
    results, counts = kill_one_worker_mid_batch(settings, tmp_path)
    assert [r["id"] for r in results] == [s["id"] for s in SLOW_SAMPLES]
    assert [r["status"] for r in results] == ["ok"] * len(SLOW_SAMPLES)
    assert max(counts) == 2  # the chunk the dead worker held was delivered again


def test_kill_9_a_worker_on_rabbitmq_and_its_chunk_is_redelivered_at_once(rabbit_up: None, tmp_path: Path) -> None:
    settings = celery_settings(
        "rabbit", chunk_size=2, broker_url=rabbit_url("rabbit"), result_backend=redis_result_url()
    )
    try:
        # slower samples: on a loaded machine a 0.4 s chunk can finish before the kill lands
        results, counts = kill_one_worker_mid_batch(settings, tmp_path, SLOWER_SAMPLES)
    finally:
        delete_queues(settings)
    assert [r["status"] for r in results] == ["ok"] * len(SLOWER_SAMPLES)
    assert max(counts) == 2


def test_a_poison_sample_is_retried_a_bounded_number_of_times_then_reported(redis_up: None, tmp_path: Path) -> None:
    settings = celery_settings("poison")
    ledger = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    before = ledger_keys(ledger)
    worker = start_worker(settings, tmp_path, queues="gpu", env={"CUDA_VISIBLE_DEVICES": ""})
    try:
        with ServiceThread(settings) as service:
            samples = [{"response": r, "verifier": "test_model_crash"} for r in ["fine", "crash", "fine"]]
            response = httpx.post(f"{service.url}/v1/score", json={"samples": samples}, timeout=120)
    finally:
        stop_workers([worker])
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["ok", "error", "ok"]
    assert "worker process died while scoring this sample" in results[1]["error"]
    assert (
        max(deliveries(ledger, ledger_keys(ledger) - before)) == 3
    )  # the fast pass, a careful pass that died, one that reported


def delete_queues(settings: Settings) -> None:
    options = broker_options(settings)
    with Connection(options.url) as connection:
        channel = connection.channel()
        for name in QUEUES:
            try:
                Queue(options.queue(name)).bind(channel).delete()
            except Exception:  # noqa: BLE001 - cleanup is best effort
                pass


pytestmark = pytest.mark.slow
