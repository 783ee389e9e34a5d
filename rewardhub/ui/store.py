"""Where API processes leave their statistics for each other: one snapshot per process.

Every process writes its own snapshot under its own key and reads everyone's, so no two processes
ever write the same value and nothing needs a lock or a transaction; the page adds the snapshots up
(``rewardhub.ui.stats.merge``). Three stores, chosen by the ``ui_store`` setting:

- ``memory``: this process only (one ``rewardhub serve``);
- ``sqlite:///path/to/file.db``: processes on one host (``--api-workers``, several services
  pointed at one file); unset in local mode with ``PROMETHEUS_MULTIPROC_DIR`` set, the file lives
  in that directory, which the processes already share;
- ``redis://host:port/db``: processes on several hosts; unset in Celery mode, the Redis broker
  or result backend is used.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from rewardhub.errors import InvalidConfig
from rewardhub.settings import Settings

__all__ = ["MemoryStore", "RedisStore", "SqliteStore", "StatsStore", "open_store", "store_url"]

SNAPSHOT_TTL_S = 7 * 24 * 3600  # a process gone for a week no longer counts


class StatsStore(Protocol):
    def put(self, process: str, snapshot: dict[str, Any]) -> None: ...

    def all(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class MemoryStore:
    def __init__(self) -> None:
        self._snapshots: dict[str, dict[str, Any]] = {}

    def put(self, process: str, snapshot: dict[str, Any]) -> None:
        self._snapshots[process] = snapshot

    def all(self) -> list[dict[str, Any]]:
        return list(self._snapshots.values())

    def close(self) -> None:
        pass


class SqliteStore:
    """A file on one host; WAL mode so readers never wait on a writer."""

    def __init__(self, path: str | Path, namespace: str) -> None:
        self.path = str(path)
        self.namespace = namespace
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS snapshots "
                "(namespace TEXT, process TEXT, updated REAL, data TEXT, PRIMARY KEY (namespace, process))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=5.0, isolation_level=None)

    def put(self, process: str, snapshot: dict[str, Any]) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
                (self.namespace, process, snapshot.get("time", 0.0), json.dumps(snapshot)),
            )

    def all(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT data FROM snapshots WHERE namespace = ? AND updated > strftime('%s', 'now') - ?",
                (self.namespace, SNAPSHOT_TTL_S),
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        pass


class RedisStore:
    """One Redis hash per namespace, field = process; the hash expires a week after the last write."""

    def __init__(self, url: str, namespace: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.key = f"rewardhub:ui:{namespace}"

    def put(self, process: str, snapshot: dict[str, Any]) -> None:
        with self.client.pipeline() as pipe:
            pipe.hset(self.key, process, json.dumps(snapshot))
            pipe.expire(self.key, SNAPSHOT_TTL_S)
            pipe.execute()

    def all(self) -> list[dict[str, Any]]:
        return [json.loads(data) for data in self.client.hgetall(self.key).values()]

    def close(self) -> None:
        self.client.close()


def store_url(settings: Settings) -> str:
    """The store this service uses: the setting, else what its deployment already shares."""
    if settings.ui_store:
        return settings.ui_store
    if settings.execution == "celery":
        for url in (settings.result_backend, settings.broker_url):
            if url and url.startswith(("redis://", "rediss://")):
                return urlunsplit(urlsplit(url)._replace(query=""))  # the query holds Celery's transport options
    shared_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if shared_dir:
        # not *.db: prometheus_client reads every *.db file of that folder as its own
        return f"sqlite:///{Path(shared_dir) / 'rewardhub-ui.sqlite3'}"
    return "memory"


def open_store(settings: Settings) -> StatsStore:
    url = store_url(settings)
    if url == "memory":
        return MemoryStore()
    if url.startswith("sqlite:///"):
        return SqliteStore(url.removeprefix("sqlite:///"), settings.ui_namespace)
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(url, settings.ui_namespace)
    raise InvalidConfig(f"ui_store must be 'memory', 'sqlite:///PATH' or 'redis://...', not {url!r}")
