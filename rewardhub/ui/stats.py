"""The figures of the operator page, as plain data that several processes can add up.

Each API process keeps one :class:`ProcessStats`: per verifier and per run, the samples it scored
by status, the most frequent error messages, its recent latencies and rewards, and samples per
second; plus the last samples it scored with their details. :meth:`ProcessStats.snapshot` turns it
into a JSON-able dict that the process writes to a shared store (``rewardhub.ui.store``), and
:func:`merge` adds the snapshots of every process up, so the page shows the service, not the one
process that answered the poll (the way Prometheus' multiprocess mode sums files).

Counts and error tallies are exact and cumulative. Percentiles and the reward histogram are over a
window of the most recent samples per process (``WINDOW``): an operator watching a run wants what
the verifier does now, and a window is what can be merged without keeping every sample.

The reward cache's figures ride in the same snapshot (``cache``: the process's lookups by outcome,
stores, evictions by reason, and the entry count of its backend), so the page's hit rate is the
service's, as ``/metrics`` sums it. Entries add up across processes that each hold their own
memory LRU; processes that share one store (a sqlite file, Redis) each report that store's whole
count, which is taken once.
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardhub.types import STATUSES

__all__ = [
    "CACHE_COUNTS",
    "WINDOW",
    "ProcessStats",
    "ScopeStats",
    "histogram",
    "merge",
    "merge_cache",
    "percentile",
    "summarise",
    "summarise_cache",
]

WINDOW = 1000  # recent latencies and rewards kept per scope and process
RATE_WINDOW_S = 10  # samples/s is the count over the last this many seconds
MAX_ERROR_MESSAGES = 50  # distinct error messages tallied per scope (the rest count as "other")
ERROR_MESSAGE_CHARS = 300
TOP_ERRORS = 5
MAX_RUNS = 50  # runs kept per process; the least recently scored one makes room for a new one

Outcome = tuple[str, float, float, str | None]  # (status, score, elapsed_ms, error) of one sample

CACHE_COUNTS = ("hits", "misses", "corrupt", "stores", "errors")
"""The cache's cumulative counts per process, summed across processes."""


@dataclass
class ScopeStats:
    """One verifier's or one run's figures in one process."""

    counts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    rewards: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    per_second: Counter[int] = field(default_factory=Counter)
    updated: float = 0.0

    def add(self, status: str, score: float, elapsed_ms: float, error: str | None, now: float) -> None:
        self.add_many([(status, score, elapsed_ms, error)], now)

    def add_many(self, outcomes: Sequence[Outcome], now: float) -> None:
        """Count a batch at once: a 10,000-sample request must not cost 10,000 rounds of bookkeeping."""
        self.counts.update(status for status, _, _, _ in outcomes)
        tail = outcomes[-WINDOW:]  # only the window is kept of latencies and rewards
        self.latencies_ms.extend(elapsed_ms for _, _, elapsed_ms, _ in tail)
        # a failure's score is the failure score, not a reward
        self.rewards.extend(score for status, score, _, _ in tail if status == "ok" and math.isfinite(score))
        for _, _, _, error in outcomes:
            if error is not None:
                message = error[:ERROR_MESSAGE_CHARS]
                if message not in self.errors and len(self.errors) >= MAX_ERROR_MESSAGES:
                    message = "(other messages)"
                self.errors[message] += 1
        self.updated = max(self.updated, now)
        second = int(now)
        self.per_second[second] += len(outcomes)
        if len(self.per_second) > 2 * RATE_WINDOW_S:
            for old in [s for s in self.per_second if s <= second - RATE_WINDOW_S]:
                del self.per_second[old]

    def snapshot(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "errors": dict(self.errors),
            "latencies_ms": [round(ms, 3) for ms in self.latencies_ms],
            "rewards": list(self.rewards),
            "per_second": {str(k): v for k, v in self.per_second.items()},
        }


@dataclass
class ProcessStats:
    """Everything one process has observed; ``snapshot()`` is what it shares."""

    recent_limit: int = 200
    verifiers: dict[str, ScopeStats] = field(default_factory=dict)
    runs: dict[str, ScopeStats] = field(default_factory=dict)
    recent: deque[dict[str, Any]] = field(default_factory=deque)
    total: int = 0
    cache: dict[str, Any] | None = None  # the reward cache's figures (see merge_cache); None: no cache

    def add(
        self,
        verifier: str,
        run: str | None,
        status: str,
        score: float,
        elapsed_ms: float,
        error: str | None,
        now: float | None = None,
    ) -> None:
        """One sample (the tests write events one by one; the recorder counts batches)."""
        self.add_many(verifier, run, [(status, score, elapsed_ms, error)], now)

    def add_many(self, verifier: str, run: str | None, outcomes: Sequence[Outcome], now: float | None = None) -> None:
        now = time.time() if now is None else now
        self.verifiers.setdefault(verifier, ScopeStats()).add_many(outcomes, now)
        if run is not None:
            if run not in self.runs and len(self.runs) >= MAX_RUNS:  # a tag per step must not grow without end
                del self.runs[min(self.runs, key=lambda name: self.runs[name].updated)]
            self.runs.setdefault(run, ScopeStats()).add_many(outcomes, now)
        self.total += len(outcomes)

    def remember(self, entry: dict[str, Any]) -> None:
        """Keep ``entry`` among the last ``recent_limit`` samples."""
        self.recent.append(entry)
        while len(self.recent) > self.recent_limit:
            self.recent.popleft()

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        return {
            "time": time.time() if now is None else now,
            "total": self.total,
            "verifiers": {name: scope.snapshot() for name, scope in self.verifiers.items()},
            "runs": {name: scope.snapshot() for name, scope in self.runs.items()},
            "recent": list(self.recent),
            "cache": self.cache,
        }


def merge(snapshots: list[dict[str, Any]], recent_limit: int = 200) -> dict[str, Any]:
    """Add the snapshots of several processes up into one snapshot of the same shape."""
    merged: dict[str, Any] = {"time": 0.0, "total": 0, "verifiers": {}, "runs": {}, "recent": [], "processes": 0}
    for snap in snapshots:
        merged["processes"] += 1
        merged["time"] = max(merged["time"], snap.get("time", 0.0))
        merged["total"] += snap.get("total", 0)
        for table in ("verifiers", "runs"):
            for name, scope in snap.get(table, {}).items():
                into = merged[table].setdefault(
                    name, {"counts": {}, "errors": {}, "latencies_ms": [], "rewards": [], "per_second": {}}
                )
                for key in ("counts", "errors", "per_second"):
                    for k, v in scope.get(key, {}).items():
                        into[key][k] = into[key].get(k, 0) + v
                into["latencies_ms"].extend(scope.get("latencies_ms", []))
                into["rewards"].extend(scope.get("rewards", []))
        merged["recent"].extend(snap.get("recent", []))
    merged["recent"].sort(key=lambda entry: (entry.get("ts", 0.0), entry.get("seq", 0)), reverse=True)
    merged["recent"] = merged["recent"][:recent_limit]
    merged["cache"] = merge_cache([snap["cache"] for snap in snapshots if snap.get("cache")])
    return merged


def merge_cache(caches: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cache figures of several processes as one: counts and evictions summed; entries summed
    over memory LRUs (each process has its own) and taken once per shared store (each process
    reports the store's whole count; the largest, the latest, wins). None when no process has a cache."""
    if not caches:
        return None
    merged: dict[str, Any] = {key: 0 for key in CACHE_COUNTS}
    merged["evictions"] = {}
    merged["backends"] = sorted({cache.get("backend", "memory") for cache in caches})
    memory, shared, unknown = 0, {}, False
    for cache in caches:
        for key in CACHE_COUNTS:
            merged[key] += cache.get(key, 0)
        for reason, n in cache.get("evictions", {}).items():
            merged["evictions"][reason] = merged["evictions"].get(reason, 0) + n
        entries, backend = cache.get("entries", -1), cache.get("backend", "memory")
        if entries < 0:  # its backend did not answer
            unknown = True
        elif backend == "memory":
            memory += entries
        else:
            shared[backend] = max(shared.get(backend, 0), entries)
    merged["entries"] = None if unknown else memory + sum(shared.values())
    return merged


def summarise_cache(cache: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page shows of the cache: hit rate over every lookup (a corrupt entry is a lookup that
    did not hit), entries (None when a backend did not answer), evictions by reason."""
    if cache is None:
        return None
    lookups = cache["hits"] + cache["misses"] + cache["corrupt"]
    evictions = {"size": 0, "ttl": 0, **cache["evictions"]}
    return {
        "backends": cache["backends"],
        "lookups": lookups,
        "hits": cache["hits"],
        "misses": cache["misses"],
        "corrupt": cache["corrupt"],
        "hit_rate": cache["hits"] / lookups if lookups else None,
        "stores": cache["stores"],
        "errors": cache["errors"],
        "entries": cache["entries"],
        "evictions": evictions,
        "evicted": sum(evictions.values()),
    }


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100), linear between the closest ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def histogram(values: list[float], bins: int = 20) -> dict[str, Any]:
    """Equal-width bins over [0, 1] when every value lies there (the usual reward), else over the range."""
    if not values:
        return {"lo": 0.0, "hi": 1.0, "counts": [0] * bins}
    lo, hi = min(values), max(values)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    elif lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts = [0] * bins
    width = (hi - lo) / bins
    for value in values:
        counts[min(bins - 1, int((value - lo) / width))] += 1
    return {"lo": lo, "hi": hi, "counts": counts}


def summarise_scope(scope: dict[str, Any], now: float) -> dict[str, Any]:
    """What the page shows for one verifier or run."""
    counts = {status: scope["counts"].get(status, 0) for status in STATUSES}
    recent_seconds = [int(s) for s in scope["per_second"]]
    window_start = int(now) - RATE_WINDOW_S
    in_window = sum(n for s, n in zip(recent_seconds, scope["per_second"].values(), strict=True) if s > window_start)
    top = sorted(scope["errors"].items(), key=lambda item: (-item[1], item[0]))[:TOP_ERRORS]
    return {
        "samples": sum(scope["counts"].values()),
        "status": counts,
        "samples_per_s": in_window / RATE_WINDOW_S,
        "latency_ms": {
            "p50": percentile(scope["latencies_ms"], 50),
            "p99": percentile(scope["latencies_ms"], 99),
            "window": len(scope["latencies_ms"]),
        },
        "top_errors": [{"message": message, "count": n} for message, n in top],
        "reward_mean": (sum(scope["rewards"]) / len(scope["rewards"])) if scope["rewards"] else None,
        "reward_histogram": histogram(scope["rewards"]),
    }


def summarise(merged: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """The page's figures from a merged snapshot (sample entries are served separately)."""
    now = time.time() if now is None else now
    return {
        "time": now,
        "processes": merged.get("processes", 0),
        "total": merged["total"],
        "verifiers": {name: summarise_scope(scope, now) for name, scope in sorted(merged["verifiers"].items())},
        "runs": {name: summarise_scope(scope, now) for name, scope in sorted(merged["runs"].items())},
        "cache": summarise_cache(merged.get("cache")),
    }
