"""Redis restarted while the service is idle: the API and the workers reconnect by themselves.

The Redis restarted here is this test's own (:class:`PrivateRedis`, without persistence, so every
key in it is gone afterwards): the machine's shared Redis is never restarted by a test. The
restart in the middle of a batch is in ``test_worker_loss.py``.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import httpx
import pytest
from celery_support import PrivateRedis, ServiceThread, broker_url, celery_settings, start_worker, stop_workers

from rewardhub.client import RewardClient


def wait_for(condition, timeout_s: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.1)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed here")
def test_the_service_recovers_after_redis_restarts_while_idle(tmp_path: Path) -> None:
    samples = [{"response": "0", "verifier": "test_sleepy"}] * 6
    with PrivateRedis(tmp_path) as server:
        settings = celery_settings("idle", broker_url=broker_url("idle", 0, server.port))
        worker = start_worker(settings, tmp_path)
        try:
            with ServiceThread(settings) as service, RewardClient(service.url, max_retries=8, backoff_s=0.5) as client:
                assert [r.status for r in client.score(samples)] == ["ok"] * 6
                server.restart()
                after = client.score(samples)
                assert [r.status for r in after] == ["ok"] * 6, [r.error for r in after]
                wait_for(lambda: httpx.get(f"{service.url}/readyz").status_code == 200, 30)
        finally:
            stop_workers([worker])
