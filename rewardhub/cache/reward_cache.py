"""The reward cache the scorer consults: addresses in, verified results out, counted.

:class:`RewardCache` puts :mod:`~rewardhub.cache.entries` (what an entry holds and the checks
before it is served) in front of a :mod:`~rewardhub.cache.backends` backend. A lookup that finds
a corrupt or poisoned entry logs a warning naming the check it failed, deletes the entry and
reports a miss: the sample is scored again, never served a doubtful verdict. A backend that
fails (Redis down) is a miss too, logged once a minute: the cache may cost a verdict's time,
never a verdict.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from rewardhub.cache.backends import Backend, MemoryBackend, RedisBackend, SqliteBackend
from rewardhub.cache.entries import CorruptEntry, decode_entry, encode_entry
from rewardhub.errors import InvalidConfig
from rewardhub.settings import Settings
from rewardhub.types import Result

__all__ = ["CacheStats", "RewardCache", "cache_url", "open_cache"]

log = logging.getLogger("rewardhub.cache")

_WARN_EVERY_S = 60.0


@dataclass(frozen=True)
class CacheStats:
    """What ``/metrics`` and the operator page show: lookups by outcome, entries, evictions by reason."""

    hits: int
    misses: int
    corrupt: int
    stores: int
    errors: int
    entries: int
    evictions: Mapping[str, int]

    @property
    def hit_rate(self) -> float | None:
        lookups = self.hits + self.misses + self.corrupt
        return self.hits / lookups if lookups else None


class RewardCache:
    def __init__(
        self,
        backend: Backend,
        statuses: Collection[str] = ("ok",),
        secret: str | None = None,
        url: str = "memory",
    ) -> None:
        self.backend, self.statuses, self.secret, self.url = backend, frozenset(statuses), secret, url
        self.counts: Counter[str] = Counter()
        self._last_warning = 0.0

    @property
    def blocking(self) -> bool:
        return self.backend.blocking

    def lookup(self, wanted: Sequence[tuple[str, Mapping[str, str]]]) -> list[Result | None]:
        """For each (address, expected verdict key): the stored result, or None (absent, corrupt, failing)."""
        if not wanted:
            return []
        try:
            found = self.backend.get_many([key for key, _ in wanted])
        except Exception as exc:  # a cache outage is a miss, not a failed request
            self._backend_failed("lookup", exc)
            self.counts["miss"] += len(wanted)
            return [None] * len(wanted)
        out: list[Result | None] = []
        for (key, verdict_key), data in zip(wanted, found, strict=True):
            if data is None:
                self.counts["miss"] += 1
                out.append(None)
                continue
            try:
                out.append(decode_entry(key, data, verdict_key, self.statuses, self.secret))
                self.counts["hit"] += 1
            except CorruptEntry as exc:
                self.counts["corrupt"] += 1
                log.warning("reward cache: ignored the entry at %s: %s; scoring the sample again", key, exc)
                self._forget(key)
                out.append(None)
        return out

    def store(self, items: Sequence[tuple[str, Result]]) -> int:
        """Store the results whose status may be cached; returns how many were stored."""
        kept = [
            (key, encode_entry(key, result, self.secret)) for key, result in items if result.status in self.statuses
        ]
        if not kept:
            return 0
        try:
            self.backend.put_many(kept)
        except Exception as exc:
            self._backend_failed("store", exc)
            return 0
        self.counts["store"] += len(kept)
        return len(kept)

    def stats(self, with_size: bool = True) -> CacheStats:
        """The counts; ``entries`` is -1 when not asked for (``with_size``) or when the backend is down."""
        entries = -1
        if with_size:
            try:
                entries = self.backend.size()
            except Exception:
                pass  # unknown: the backend is down
        return CacheStats(
            hits=self.counts["hit"],
            misses=self.counts["miss"],
            corrupt=self.counts["corrupt"],
            stores=self.counts["store"],
            errors=self.counts["error"],
            entries=entries,
            evictions=dict(self.backend.evictions),
        )

    def close(self) -> None:
        self.backend.close()

    def _forget(self, key: str) -> None:
        try:
            self.backend.delete(key)
        except Exception as exc:
            self._backend_failed("delete", exc)

    def _backend_failed(self, what: str, exc: Exception) -> None:
        self.counts["error"] += 1
        now = time.monotonic()
        if now - self._last_warning >= _WARN_EVERY_S:
            self._last_warning = now
            log.warning(
                "reward cache %s on %s failed (%s: %s); scoring without it", what, self.url, type(exc).__name__, exc
            )


def cache_url(settings: Settings) -> str:
    """The backend this service uses: the setting, else what its deployment already shares (the
    Celery engine's Redis; with ``--api-workers``, a file in their ``PROMETHEUS_MULTIPROC_DIR``),
    else this process's memory."""
    if settings.cache_backend:
        return settings.cache_backend
    if settings.execution == "celery":
        for url in (settings.result_backend, settings.broker_url):
            if url and url.startswith(("redis://", "rediss://")):
                return urlunsplit(urlsplit(url)._replace(query=""))
    shared_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if shared_dir:  # not *.db: prometheus_client reads every *.db file of that folder as its own
        return f"sqlite:///{Path(shared_dir) / 'rewardhub-cache.sqlite3'}"
    return "memory"


def open_cache(settings: Settings) -> RewardCache | None:
    """The cache the settings name; None when it is ``off``."""
    url = cache_url(settings)
    size, ttl, ns = settings.cache_max_entries, settings.cache_ttl_s, settings.cache_namespace
    backend: Backend
    if url == "off":
        return None
    if url == "memory":
        backend = MemoryBackend(size, ttl)
    elif url.startswith("sqlite:///"):
        backend = SqliteBackend(url.removeprefix("sqlite:///"), ns, size, ttl)
    elif url.startswith(("redis://", "rediss://", "unix://")):
        backend = RedisBackend(url, ns, size, ttl)
    else:
        raise InvalidConfig(f"cache_backend must be off, memory, sqlite:///PATH or redis://..., not {url!r}")
    return RewardCache(backend, settings.cache_statuses, settings.cache_secret, url)
