"""Each backend keeps at most max_entries (least recently used go first) and none older than the TTL.

Time is the backend module's clock, moved by the test (Redis expires keys on its own clock: its
TTL test waits past a short TTL instead).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardhub.cache import MemoryBackend, RedisBackend, SqliteBackend, cache_url, open_cache
from rewardhub.cache import backends as backends_module
from rewardhub.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(backends_module.time, "time", fake.time)
    return fake


def _lru_and_size(backend: MemoryBackend | SqliteBackend) -> None:
    backend.put_many([("a", b"1"), ("b", b"2"), ("c", b"3")])
    assert backend.get_many(["a"]) == [b"1"]  # a is now the most recently used
    backend.put_many([("d", b"4")])
    assert backend.get_many(["a", "b", "c", "d"]) == [b"1", None, b"3", b"4"]
    assert backend.size() == 3 and backend.evictions["size"] == 1


def _ttl(backend: MemoryBackend | SqliteBackend, clock: Clock) -> None:
    backend.put_many([("old", b"x")])
    clock.now += 50
    backend.put_many([("new", b"y")])
    clock.now += 60  # old is 110 s old, new 60 s: the TTL is 100 s
    assert backend.get_many(["old", "new"]) == [None, b"y"]
    assert backend.evictions["ttl"] == 1


def test_memory_lru_and_size(clock: Clock) -> None:
    _lru_and_size(MemoryBackend(max_entries=3, ttl_s=100))


def test_memory_ttl(clock: Clock) -> None:
    _ttl(MemoryBackend(max_entries=10, ttl_s=100), clock)


def test_sqlite_lru_and_size(clock: Clock, tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "cache.sqlite3", "t", max_entries=3, ttl_s=100)
    clock.now += 1  # sqlite orders by the time of use: each step a tick later
    backend.put_many([("a", b"1"), ("b", b"2"), ("c", b"3")])
    clock.now += 1
    assert backend.get_many(["a"]) == [b"1"]
    clock.now += 1
    backend.put_many([("d", b"4")])
    assert backend.get_many(["a", "b", "c", "d"]) == [b"1", None, b"3", b"4"]
    assert backend.size() == 3 and backend.evictions["size"] == 1


def test_sqlite_ttl_and_sharing_between_processes(clock: Clock, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    _ttl(SqliteBackend(path, "t", max_entries=10, ttl_s=100), clock)
    other = SqliteBackend(path, "t", max_entries=10, ttl_s=100)  # another process on the host opens the file
    assert other.get_many(["new"]) == [b"y"]
    assert SqliteBackend(path, "elsewhere", max_entries=10, ttl_s=100).get_many(["new"]) == [None]


def test_the_backend_follows_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    assert cache_url(Settings()) == "memory"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # what --api-workers N shares
    assert cache_url(Settings()) == f"sqlite:///{tmp_path / 'rewardhub-cache.sqlite3'}"
    assert cache_url(Settings(execution="celery", broker_url="redis://h:1/2?x=y")) == "redis://h:1/2"
    assert open_cache(Settings(cache_backend="off")) is None
    sqlite = open_cache(Settings(cache_backend=f"sqlite:///{tmp_path / 'c.sqlite3'}"))
    assert sqlite is not None and isinstance(sqlite.backend, SqliteBackend)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.mark.integration
def test_redis_bounds_size_expires_and_is_shared(redis_url: str) -> None:
    one = RedisBackend(redis_url, "t", max_entries=3, ttl_s=0.3)
    one.put_many([("a", b"1"), ("b", b"2"), ("c", b"3")])
    one.put_many([("d", b"4")])
    assert one.size() == 3 and one.evictions["size"] == 1
    other = RedisBackend(redis_url, "t", max_entries=3, ttl_s=0.3)  # another replica
    assert other.get_many(["a", "b", "c", "d"]) == [None, b"2", b"3", b"4"]
    time.sleep(0.5)  # past the TTL: Redis has expired the keys
    assert other.get_many(["b", "c", "d"]) == [None, None, None]
    one.delete("d")
    assert one.size() == 2  # b and c linger in the index until the next store trims them
    one.put_many([("e", b"5")])
    assert one.size() == 1 and one.evictions["ttl"] == 2


def test_a_backend_that_fails_is_a_miss_not_a_failed_request(caplog: pytest.LogCaptureFixture) -> None:
    from rewardhub.cache import RewardCache

    cache = RewardCache(RedisBackend(f"redis://127.0.0.1:{_free_port()}/0", "t", 10, 60), url="redis://down")
    assert cache.lookup([("k", {"verifier": "v", "version": "1", "config_hash": "h"})]) == [None]
    assert cache.stats().errors == 1 and cache.stats().entries == -1
    assert "scoring without it" in caplog.text
