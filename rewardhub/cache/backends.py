"""Where cache entries live: bytes by address, bounded in count and age.

Three backends with one shape (:class:`Backend`), chosen by the ``cache_backend`` setting:

- ``memory``: an LRU in this process (one ``rewardhub serve``, ``rewardhub score``);
- ``sqlite:///PATH``: a file shared by the processes of one host (``--api-workers``);
- ``redis://host:port/db``: shared by every process and replica (the default in Celery mode).

Each keeps at most ``max_entries`` entries, dropping the least recently used (the oldest stored,
for Redis), and none older than ``ttl_s``. Evictions are counted by reason (``size``, ``ttl``).
Calls block: the scorer runs the sqlite and Redis ones in a thread.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["Backend", "MemoryBackend", "RedisBackend", "SqliteBackend"]


class Backend(Protocol):
    evictions: Counter[str]
    blocking: bool

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None: ...

    def delete(self, key: str) -> None: ...

    def size(self) -> int: ...

    def close(self) -> None: ...


class MemoryBackend:
    blocking = False

    def __init__(self, max_entries: int, ttl_s: float) -> None:
        self.max_entries, self.ttl_s = max_entries, ttl_s
        self.evictions: Counter[str] = Counter()
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        now, out = time.time(), []
        with self._lock:
            for key in keys:
                found = self._entries.get(key)
                if found is not None and now - found[0] > self.ttl_s:
                    del self._entries[key]
                    self.evictions["ttl"] += 1
                    found = None
                if found is not None:
                    self._entries.move_to_end(key)
                out.append(found[1] if found is not None else None)
        return out

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        now = time.time()
        with self._lock:
            for key, value in items:
                self._entries[key] = (now, value)
                self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
                self.evictions["size"] += 1

    def delete(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def size(self) -> int:
        return len(self._entries)

    def close(self) -> None:
        pass


class SqliteBackend:
    """One table; WAL mode so readers never wait on a writer; ``used`` orders the LRU."""

    blocking = True
    _CHUNK = 500  # sqlite's limit on host parameters is 999 in old builds

    def __init__(self, path: str | Path, namespace: str, max_entries: int, ttl_s: float) -> None:
        self.namespace, self.max_entries, self.ttl_s = namespace, max_entries, ttl_s
        self.evictions: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS reward_cache (namespace TEXT, key TEXT, value BLOB, stored REAL, used REAL, "
            "PRIMARY KEY (namespace, key))"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS reward_cache_used ON reward_cache (namespace, used)")

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        now, found = time.time(), {}
        with self._lock:
            for start in range(0, len(keys), self._CHUNK):
                chunk = list(keys[start : start + self._CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value, stored FROM reward_cache WHERE namespace = ? AND key IN ({marks})",
                    [self.namespace, *chunk],
                ).fetchall()
                found.update({key: (value, stored) for key, value, stored in rows})
            fresh = {key: value for key, (value, stored) in found.items() if now - stored <= self.ttl_s}
            stale = [key for key in found if key not in fresh]
            if stale:
                self._db.executemany(
                    "DELETE FROM reward_cache WHERE namespace = ? AND key = ?", [(self.namespace, k) for k in stale]
                )
                self.evictions["ttl"] += len(stale)
            if fresh:
                self._db.executemany(
                    "UPDATE reward_cache SET used = ? WHERE namespace = ? AND key = ?",
                    [(now, self.namespace, key) for key in fresh],
                )
        return [bytes(fresh[key]) if key in fresh else None for key in keys]

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        if not items:
            return
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO reward_cache VALUES (?, ?, ?, ?, ?)",
                    [(self.namespace, key, value, now, now) for key, value in items],
                )
                excess = self._count() - self.max_entries
                if excess > 0:
                    self._db.execute(
                        "DELETE FROM reward_cache WHERE namespace = ? AND key IN (SELECT key FROM reward_cache "
                        "WHERE namespace = ? ORDER BY used LIMIT ?)",
                        (self.namespace, self.namespace, excess),
                    )
                    self.evictions["size"] += excess
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def delete(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM reward_cache WHERE namespace = ? AND key = ?", (self.namespace, key))

    def _count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM reward_cache WHERE namespace = ?", (self.namespace,)).fetchone()[
            0
        ]

    def size(self) -> int:
        with self._lock:
            return self._count()

    def close(self) -> None:
        self._db.close()


class RedisBackend:
    """Entries as keys with Redis's own TTL; a sorted set by store time bounds their number."""

    blocking = True

    def __init__(self, url: str, namespace: str, max_entries: int, ttl_s: float) -> None:
        import redis

        self.client = redis.Redis.from_url(url)
        self.max_entries, self.ttl_s = max_entries, ttl_s
        self.prefix = f"rewardhub:cache:{namespace}:"
        self.index = f"rewardhub:cache-index:{namespace}"
        self.evictions: Counter[str] = Counter()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        return list(self.client.mget([self.prefix + key for key in keys]))

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        if not items:
            return
        now = time.time()
        ttl_ms = max(1, int(self.ttl_s * 1000))
        with self.client.pipeline(transaction=False) as pipe:
            for key, value in items:
                pipe.set(self.prefix + key, value, px=ttl_ms)
            pipe.zadd(self.index, {key: now for key, _ in items})
            pipe.zremrangebyscore(self.index, "-inf", now - self.ttl_s)  # expired by Redis already
            pipe.zcard(self.index)
            *_, expired, count = pipe.execute()
        self.evictions["ttl"] += int(expired)
        excess = int(count) - self.max_entries
        if excess > 0:
            oldest = [key for key, _ in self.client.zpopmin(self.index, excess)]
            if oldest:
                self.client.delete(*[self.prefix + (k.decode() if isinstance(k, bytes) else k) for k in oldest])
                self.evictions["size"] += len(oldest)

    def delete(self, key: str) -> None:
        with self.client.pipeline(transaction=False) as pipe:
            pipe.delete(self.prefix + key)
            pipe.zrem(self.index, key)
            pipe.execute()

    def size(self) -> int:
        return int(self.client.zcard(self.index))

    def close(self) -> None:
        self.client.close()
