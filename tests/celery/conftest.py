"""Fixtures of the Celery tests: real brokers, real worker processes, a real API.

Redis (127.0.0.1:6379) and RabbitMQ (127.0.0.1:5672, guest/guest) must be running on this
machine; tests that need one skip when it is unreachable. Each test session uses its own Redis
database and queue-name prefix, so parallel runs on one broker do not take each other's work.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from celery_support import (
    RABBIT,
    REDIS,
    CeleryService,
    PrivateRedis,
    ServiceThread,
    celery_settings,
    reachable,
    start_workers,
    stop_workers,
)


@pytest.fixture(scope="session")
def redis_up() -> None:
    if not reachable(REDIS):
        pytest.skip("Redis is not reachable on 127.0.0.1:6379")


@pytest.fixture(scope="session")
def rabbit_up(redis_up: None) -> None:
    if not reachable(RABBIT):
        pytest.skip("RabbitMQ is not reachable on 127.0.0.1:5672")


@pytest.fixture(scope="session")
def celery_service(redis_up: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CeleryService]:
    """API in celery mode with two single-process CPU workers (same limits as the local test service)."""
    settings = celery_settings("main")
    tmp = tmp_path_factory.mktemp("celery-main")
    workers = start_workers(settings, tmp, 2)
    try:
        with ServiceThread(settings) as service:
            yield CeleryService(service.url, settings, workers)
    finally:
        stop_workers(workers)


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    """A redis-server of this test module alone: fault tests are not disturbed by (and do not
    disturb) other runs on the machine's shared Redis, and may restart it."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed here")
    with PrivateRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server
