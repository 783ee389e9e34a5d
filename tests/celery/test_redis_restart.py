"""Redis restarted while the service is idle: the API and the workers reconnect by themselves.

This restarts the machine's Redis (without persistence, as it runs here), so every key in it is
gone afterwards, and it is started again with the same command line whatever happens.
"""

from __future__ import annotations

import shutil
import subprocess
import time

import httpx
import pytest
import redis
from celery_support import REDIS, CeleryService, reachable

from rewardhub.client import RewardClient

REDIS_COMMAND = [
    "redis-server",
    "--daemonize",
    "yes",
    "--bind",
    "127.0.0.1",
    "-::1",
    "--port",
    "6379",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    "/var/lib/redis",
    "--logfile",
    "/var/log/redis/ci.log",
]


def wait_for(condition, timeout_s: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.1)


def restart_redis() -> None:
    try:
        redis.Redis(host=REDIS[0], port=REDIS[1]).shutdown(nosave=True)
    except redis.ConnectionError:
        pass  # the server closes the connection as it goes
    try:
        wait_for(lambda: not reachable(REDIS), 15)
    finally:
        if not reachable(REDIS):
            subprocess.run(REDIS_COMMAND, check=True)
        wait_for(lambda: reachable(REDIS), 15)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed here")
def test_the_service_recovers_after_redis_restarts_while_idle(celery_service: CeleryService) -> None:
    samples = [{"response": "0", "verifier": "test_sleepy"}] * 6
    with RewardClient(celery_service.url, max_retries=8, backoff_s=0.5) as client:
        assert [r.status for r in client.score(samples)] == ["ok"] * 6
        restart_redis()
        assert [r.status for r in client.score(samples)] == ["ok"] * 6
    wait_for(lambda: httpx.get(f"{celery_service.url}/readyz").status_code == 200, 30)
