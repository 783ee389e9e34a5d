"""Backpressure: a bounded queue per API process; past it, 429 with Retry-After (never a pile-up
or a timeout), in local and in Celery mode; the client's retries wait as long as they are told."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

import rewardhub.client
from rewardhub.api.app import create_app
from rewardhub.client import AsyncRewardClient, RewardClient
from rewardhub.server import EmbeddedServer, free_port
from rewardhub.settings import Settings

PLUGIN = str(Path(__file__).parent.parent / "plugins" / "testing_verifiers.py")
SLOW = [{"response": "3", "verifier": "test_sleepy"}] * 3


def queue_depth(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith("rewardhub_queue_depth "):
            return float(line.split()[1])
    return 0.0


def post_quietly(url: str) -> None:
    try:
        httpx.post(f"{url}/v1/score", json={"samples": SLOW}, timeout=120)
    except httpx.HTTPError:
        pass  # the service went away under it (the Celery test stops it with samples still out)


def fill_queue(url: str) -> threading.Thread:
    """Three slow samples in flight, against a bound of four."""
    thread = threading.Thread(target=post_quietly, args=(url,))
    thread.start()
    deadline = time.monotonic() + 30
    while queue_depth(url) < 3:
        assert time.monotonic() < deadline, "the slow request never reached the queue"
        time.sleep(0.05)
    return thread


def assert_overloaded(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["error"]["type"] == "overloaded"
    assert int(response.headers["retry-after"]) >= 1


@pytest.fixture()
def local_url() -> Iterator[str]:
    with EmbeddedServer(workers=1, plugins=[PLUGIN], max_pending_samples=4) as url:
        yield url


def test_local_mode_answers_429_with_retry_after_past_its_bound(local_url: str) -> None:
    slow = fill_queue(local_url)
    assert_overloaded(httpx.post(f"{local_url}/v1/score", json={"samples": SLOW}))
    assert_overloaded(httpx.post(f"{local_url}/v1/jobs", json={"samples": SLOW}))
    slow.join()
    assert (
        httpx.post(
            f"{local_url}/v1/score", json={"samples": [{"response": "0", "verifier": "test_sleepy"}]}
        ).status_code
        == 200
    )


def test_the_client_waits_out_retry_after_and_then_succeeds(local_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    real_sleep = time.sleep

    def recording_sleep(seconds: float) -> None:
        waits.append(seconds)
        real_sleep(seconds)

    slow = fill_queue(local_url)
    monkeypatch.setattr(rewardhub.client.time, "sleep", recording_sleep)
    with RewardClient(local_url, max_retries=10, backoff_s=0.01) as client:
        results = client.score([{"response": "0"}] * 3, "test_sleepy")
    monkeypatch.undo()
    slow.join()
    assert [r.status for r in results] == ["ok"] * 3
    assert waits and waits[0] >= 1.0  # the first wait is the server's Retry-After, not the 10 ms backoff


def answers(*responses: httpx.Response) -> httpx.MockTransport:
    queue = list(responses)
    return httpx.MockTransport(lambda request: queue.pop(0))


OK_BODY = {"results": [{"score": 1.0}], "elapsed_ms": 1.0}


def test_retry_after_sets_the_sync_clients_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(rewardhub.client.time, "sleep", waits.append)
    transport = answers(httpx.Response(429, headers={"Retry-After": "7"}, json={}), httpx.Response(200, json=OK_BODY))
    with RewardClient("http://rewardhub.test", transport=transport, backoff_s=0.01) as client:
        assert client.score([{"response": "x"}], "exact")[0].score == 1.0
    assert waits == [7.0]


async def test_retry_after_sets_the_async_clients_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    ours, sleep = asyncio.get_running_loop(), asyncio.sleep

    async def record(seconds: float) -> None:
        # asyncio.sleep is one function for every loop: a service thread left by an earlier test
        # sleeps through it too, and only this test's loop is the client's
        if asyncio.get_running_loop() is ours:
            waits.append(seconds)
        else:
            await sleep(seconds)

    monkeypatch.setattr(rewardhub.client.asyncio, "sleep", record)
    transport = answers(httpx.Response(429, headers={"Retry-After": "4"}, json={}), httpx.Response(200, json=OK_BODY))
    async with AsyncRewardClient("http://rewardhub.test", transport=transport, backoff_s=0.01) as client:
        assert (await client.score([{"response": "x"}], "exact"))[0].score == 1.0
    assert waits == [4.0]


def redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not redis_reachable(), reason="Redis is not reachable on 127.0.0.1:6379")
def test_celery_mode_answers_429_with_retry_after_past_its_bound() -> None:
    import redis

    prefix = f"bp{uuid.uuid4().hex[:8]}-"  # no worker consumes these queues: the samples stay out
    broker = f"redis://127.0.0.1:6379/15?queue_prefix={prefix}"
    settings = Settings.load(
        execution="celery", broker_url=broker, plugins=[PLUGIN], max_pending_samples=4, max_timeout_s=10
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        while not server.started:
            time.sleep(0.02)
        slow = fill_queue(url)
        assert_overloaded(httpx.post(f"{url}/v1/score", json={"samples": SLOW}))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        redis.Redis(db=15).delete(*(prefix + q for q in ("cpu", "code", "gpu")))
    slow.join(timeout=30)
    assert not slow.is_alive()  # shutting down ended the waiting request: nothing hangs
