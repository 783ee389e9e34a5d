"""A lost worker costs seconds, not the broker's visibility timeout.

Brokers run with their default settings (Redis: an hour of visibility timeout; RabbitMQ: its own
defaults), so nothing here recovers by waiting for the broker. Each test breaks something for
real mid-batch and checks that every sample is answered once, with its verdict; the time to
recover is printed (timings are never asserted).
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
import redis
from celery_support import (
    REDIS,
    ApiProcess,
    PrivateRedis,
    ServiceThread,
    Worker,
    broker_url,
    celery_settings,
    rabbit_url,
    start_worker,
    start_workers,
    stop_workers,
)
from test_faults import delete_queues, holds_an_unanswered_chunk, wait_until

from rewardhub.execution.celery_app import create_celery_app
from rewardhub.execution.celery_executor import CeleryExecutor
from rewardhub.settings import Settings

SLOW = [{"id": str(i), "response": "1.0", "verifier": "test_sleepy"} for i in range(8)]


def executor_of(service: ServiceThread) -> CeleryExecutor:
    executor = service.app.state.service.executor
    assert isinstance(executor, CeleryExecutor)
    return executor


def score_in_background(url: str, samples: list[dict]) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        out["response"] = httpx.post(f"{url}/v1/score", json={"samples": samples}, timeout=180)
        out["answered_at"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def assert_every_sample_answered_once_and_right(samples: list[dict], response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["id"] for r in results] == [s["id"] for s in samples]
    assert [(r["status"], r["score"]) for r in results] == [("ok", 1.0)] * len(samples), results


def fault_mid_batch(settings: Settings, tmp: Path, fault, ledger: redis.Redis) -> tuple[httpx.Response, float, int]:  # type: ignore[no-untyped-def]
    """Two workers take chunks of SLOW; ``fault(workers)`` strikes while both are scoring one.

    Returns the answer, the seconds from the fault to the answer, and how many chunks the API
    dispatched again."""
    workers: list[Worker] = start_workers(settings, tmp, 2)
    try:
        with ServiceThread(settings) as service:
            thread, out = score_in_background(service.url, SLOW)
            wait_until(lambda: holds_an_unanswered_chunk(ledger, workers[0]))
            struck = time.monotonic()
            fault(workers)
            thread.join(timeout=180)
            assert "response" in out, "no answer"
            return out["response"], out["answered_at"] - struck, executor_of(service).dispatch_stats.redispatched
    finally:
        stop_workers(workers)


def stop_then_resume(workers: list[Worker], settings: Settings) -> None:
    """SIGSTOP a whole worker for longer than the detection window, then SIGCONT it."""
    workers[0].signal_tree(signal.SIGSTOP)
    time.sleep(settings.lost_after_s + 4)
    workers[0].signal_tree(signal.SIGCONT)


def test_kill_9_of_a_whole_worker_is_recovered_in_seconds_on_redis_defaults(
    own_redis: PrivateRedis, tmp_path: Path
) -> None:
    settings = celery_settings("lossk", chunk_size=2, broker_url=broker_url("lossk", 0, own_redis.port))
    ledger = redis.Redis(host=REDIS[0], port=own_redis.port)
    response, recovered_s, redispatched = fault_mid_batch(
        settings, tmp_path, lambda workers: workers[0].kill_tree(), ledger
    )
    print(f"\nkill -9 of a worker (Redis defaults): answered {recovered_s:.1f}s after the kill")
    assert_every_sample_answered_once_and_right(SLOW, response)
    assert redispatched >= 1  # the API dispatched the dead worker's chunk; the broker would wait an hour


@pytest.mark.parametrize("broker", ["redis", "rabbitmq"])
def test_a_worker_stopped_longer_than_the_detection_window_then_resumed(
    broker: str, own_redis: PrivateRedis, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    results = f"redis://{REDIS[0]}:{own_redis.port}/0"
    if broker == "rabbitmq":
        request.getfixturevalue("rabbit_up")
        settings = celery_settings("lossr", chunk_size=2, broker_url=rabbit_url("lossr"), result_backend=results)
    else:
        settings = celery_settings("losss", chunk_size=2, broker_url=broker_url("losss", 0, own_redis.port))
    ledger = redis.Redis(host=REDIS[0], port=own_redis.port)
    try:
        response, recovered_s, redispatched = fault_mid_batch(
            settings, tmp_path, lambda workers: stop_then_resume(workers, settings), ledger
        )
    finally:
        if broker == "rabbitmq":
            delete_queues(settings)
    print(f"\nSIGSTOP of a worker ({broker}): answered {recovered_s:.1f}s after the stop")
    # the stopped worker's chunk was dispatched again; when it woke up, its calls had overrun
    # their limits: those timeouts are dropped, and every verdict is the real one
    assert_every_sample_answered_once_and_right(SLOW, response)
    assert redispatched >= 1


@pytest.mark.skipif(not Path("/usr/bin/redis-server").exists(), reason="redis-server is not installed here")
def test_redis_restarted_mid_batch_loses_no_sample(tmp_path: Path) -> None:
    with PrivateRedis(tmp_path) as server:
        settings = celery_settings("lossredis", chunk_size=2, broker_url=broker_url("lossredis", 0, server.port))
        ledger = redis.Redis(host=REDIS[0], port=server.port, db=0)
        response, recovered_s, redispatched = fault_mid_batch(
            settings, tmp_path, lambda workers: server.restart(), ledger
        )
    print(f"\nRedis restarted mid-batch (every key lost): answered {recovered_s:.1f}s after the restart")
    assert_every_sample_answered_once_and_right(SLOW, response)
    assert redispatched >= 1


def test_a_message_taken_by_a_worker_that_died_before_claiming_it_is_dispatched_again(
    own_redis: PrivateRedis, tmp_path: Path
) -> None:
    """On Redis, kombu pops a message before it files it as unacked, and the worker records its
    claim after that: a worker killed in between leaves a message that no holder, no broker and
    no visibility timeout will ever return. The API sees a later chunk on the same queue answered
    and dispatches the unclaimed earlier one again."""
    settings = celery_settings("losspop", chunk_size=2, broker_url=broker_url("losspop", 0, own_redis.port))
    app = create_celery_app(settings)
    queue = app.rewardhub_broker.queue("cpu")
    app.close()
    client = redis.Redis(host=REDIS[0], port=own_redis.port, db=0)
    samples = SLOW[:4]  # two chunks of two one-second samples
    with ServiceThread(settings) as service:
        thread, out = score_in_background(service.url, samples)
        wait_until(lambda: client.llen(queue) == 2)
        assert client.rpop(queue)  # the oldest message: taken by a worker that dies at once
        worker = start_worker(settings, tmp_path)
        try:
            thread.join(timeout=180)
        finally:
            stop_workers([worker])
        redispatched = executor_of(service).dispatch_stats.redispatched
    assert "response" in out, "no answer"
    assert_every_sample_answered_once_and_right(samples, out["response"])
    assert redispatched == 1


def job(url: str, job_id: str) -> dict:
    response = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_jobs_of_a_restarted_api_are_served_or_marked_failed_never_forgotten(
    own_redis: PrivateRedis, tmp_path: Path
) -> None:
    settings = celery_settings("lossapi", chunk_size=2, broker_url=broker_url("lossapi", 0, own_redis.port))
    worker = start_worker(settings, tmp_path)
    first, second = ApiProcess(settings, tmp_path), ApiProcess(settings, tmp_path)
    try:
        first.start()
        finished = httpx.post(f"{first.url}/v1/jobs", json={"samples": SLOW[:2]}, timeout=30).json()["job_id"]
        wait_until(lambda: job(first.url, finished)["status"] == "done", 60)
        long_job = [{**s, "id": f"{k}-{s['id']}"} for k in range(3) for s in SLOW]  # 24 s of work for one worker
        running = httpx.post(f"{first.url}/v1/jobs", json={"samples": long_job}, timeout=30).json()["job_id"]
        wait_until(lambda: job(first.url, running)["status"] == "running")
        first.kill()
        second.start()

        done = job(second.url, finished)  # finished before the restart: still served, with its results
        assert done["status"] == "done" and [r["status"] for r in done["results"]] == ["ok", "ok"]
        wait_until(lambda: job(second.url, running)["status"] == "failed", 60)
        lost = job(second.url, running)
        assert "stopped before the job finished" in lost["error"] and lost["results"] is None
        assert lost["progress"]["total"] == len(long_job)

        # the worker drops the chunks nobody waits for (once the dead API's key has expired), and
        # the new API is served
        wait_until(lambda: "not scored: origin_gone" in worker.log_text(), 60)
        fresh = httpx.post(f"{second.url}/v1/score", json={"samples": SLOW[:2]}, timeout=60)
        assert [r["status"] for r in fresh.json()["results"]] == ["ok", "ok"]
    finally:
        first.kill()
        second.kill()
        stop_workers([worker])


pytestmark = pytest.mark.slow
