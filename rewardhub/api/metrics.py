"""Prometheus metrics of the service, with the names listed in one table.

| metric | type | meaning |
| --- | --- | --- |
| ``rewardhub_requests_total{route,code}`` | counter | HTTP requests answered, by route template and status code |
| ``rewardhub_request_seconds{route}`` | histogram | wall time per HTTP request |
| ``rewardhub_samples_total{verifier,status}`` | counter | samples scored, by top-level verifier and status |
| ``rewardhub_verifier_seconds{verifier}`` | histogram | time one sample spent in its verifier(s) |
| ``rewardhub_timeouts_total{verifier}`` | counter | samples that hit their hard limit |
| ``rewardhub_errors_total{verifier}`` | counter | samples whose verifier could not judge |
| ``rewardhub_queue_depth`` | gauge | samples waiting or running in this process's engine |
| ``rewardhub_rejected_total{reason}`` | counter | requests refused with 413/429 |
| ``rewardhub_cache_lookups_total{outcome}`` | counter | reward cache lookups: ``hit``, ``miss``, ``corrupt`` (ignored, scored again) |
| ``rewardhub_cache_stores_total`` | counter | verdicts written to the reward cache |
| ``rewardhub_cache_evictions_total{reason}`` | counter | entries dropped: ``size`` (past cache_max_entries), ``ttl`` (past cache_ttl_s) |
| ``rewardhub_cache_entries`` | gauge | entries in the reward cache (a shared store's whole count) |
| ``rewardhub_cache_hit_ratio`` | gauge | hits over lookups since this process started |
| ``rewardhub_sessions_live`` | gauge | sessions alive now in the service's session host |
| ``rewardhub_sessions_created_total`` | counter | sessions created since the host started |
| ``rewardhub_sessions_ended_total{reason}`` | counter | sessions ended: ``deleted``, ``expired`` (idle TTL), ``lifetime``, ``killed`` (sandbox killed from outside), ``lost`` (sandbox failed, service stopping) |
| ``rewardhub_session_calls_total`` | counter | calls run in sessions (``/run``) |
| ``rewardhub_session_call_seconds`` | histogram | wall time of one call inside its session |
| ``rewardhub_sessions_rejected_total{reason}`` | counter | creations refused with 429: ``host_full``, ``key_full``, ``rate`` |

Several API processes (``uvicorn --workers N``, gunicorn) each keep their own counters; set
``PROMETHEUS_MULTIPROC_DIR`` to an empty directory shared by them (before they start: the
client library reads it at import) and every process writes its values there, and ``/metrics``
from any of them answers the sum over all (prometheus_client's multiprocess mode). The queue
depth is then the sum over live processes, refreshed by each process on every request it
answers and every scrape; a process that exits is marked dead so its gauge stops counting.
The session rows are the one session host's own counts (every API process asks the same host at
a scrape), so they are never summed over processes.
"""

from __future__ import annotations

import atexit
import collections
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rewardhub.cache import RewardCache
from rewardhub.compose import Leaf, Node
from rewardhub.types import ERROR, TIMEOUT, Result

__all__ = ["CONTENT_TYPE_LATEST", "Metrics", "MetricsMiddleware"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Metrics:
    """One set of metrics per app (tests build many apps in one process)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self._depth: Callable[[], int] | None = None
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        r = self.registry
        self.requests = Counter("rewardhub_requests_total", "HTTP requests answered", ["route", "code"], registry=r)
        self.request_seconds = Histogram(
            "rewardhub_request_seconds", "HTTP request wall time", ["route"], buckets=_LATENCY_BUCKETS, registry=r
        )
        self.samples = Counter("rewardhub_samples_total", "Samples scored", ["verifier", "status"], registry=r)
        self.verifier_seconds = Histogram(
            "rewardhub_verifier_seconds", "Verifier time per sample", ["verifier"], buckets=_LATENCY_BUCKETS, registry=r
        )
        self.timeouts = Counter(
            "rewardhub_timeouts_total", "Samples that hit their hard limit", ["verifier"], registry=r
        )
        self.errors = Counter(
            "rewardhub_errors_total", "Samples whose verifier could not judge", ["verifier"], registry=r
        )
        self.queue_depth = Gauge(
            "rewardhub_queue_depth", "Samples waiting or running", registry=r, multiprocess_mode="livesum"
        )
        self.rejected = Counter("rewardhub_rejected_total", "Requests refused for size or load", ["reason"], registry=r)
        self.cache_lookups = Counter(
            "rewardhub_cache_lookups_total", "Reward cache lookups by outcome", ["outcome"], registry=r
        )
        self.cache_stores = Counter("rewardhub_cache_stores_total", "Verdicts written to the reward cache", registry=r)
        self.cache_evictions = Counter(
            "rewardhub_cache_evictions_total", "Reward cache entries dropped", ["reason"], registry=r
        )
        self.cache_entries = Gauge(
            "rewardhub_cache_entries", "Entries in the reward cache", registry=r, multiprocess_mode="livemax"
        )
        self.cache_hit_ratio = Gauge(
            "rewardhub_cache_hit_ratio", "Reward cache hits over lookups", registry=r, multiprocess_mode="livemax"
        )
        self._cache: RewardCache | None = None
        self._cache_seen: collections.Counter[str] = collections.Counter()
        self._sessions = _SessionCollector()
        self.registry.register(self._sessions)

    def watch_sessions(self, stats: Callable[[], dict[str, Any] | None]) -> None:
        """Where the session rows come from: the session host's counts (None: no session opened yet)."""
        self._sessions.stats = stats

    def child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, remembered: prometheus_client validates and locks on every
        ``labels`` call, which costs more than the increment on a one-sample request."""
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def watch_queue(self, depth: Callable[[], int]) -> None:
        self._depth = depth
        if self.multiprocess:  # a function gauge is not shared between processes: write the value
            atexit.register(multiprocess.mark_process_dead, os.getpid())
            self.refresh()
        else:
            self.queue_depth.set_function(depth)

    def refresh(self) -> None:
        """Write this process's queue depth for the other processes (multiprocess mode only)."""
        if self.multiprocess and self._depth is not None:
            self.queue_depth.set(self._depth())

    def watch_cache(self, cache: RewardCache | None) -> None:
        self._cache = cache

    def observe_cache(self, with_size: bool = False) -> None:
        """Carry the cache's own counts into the counters (what changed since the last call);
        ``with_size`` also asks the backend its entry count (a round trip for Redis: at scrapes only)."""
        if self._cache is None:
            return
        stats = self._cache.stats(with_size)
        now = collections.Counter(
            {"hit": stats.hits, "miss": stats.misses, "corrupt": stats.corrupt, "store": stats.stores}
        )
        now.update({f"evicted:{reason}": n for reason, n in stats.evictions.items()})
        for name, value in now.items():
            delta = value - self._cache_seen[name]
            if delta <= 0:
                continue
            if name == "store":
                self.cache_stores.inc(delta)
            elif name.startswith("evicted:"):
                self.child(self.cache_evictions, name.removeprefix("evicted:")).inc(delta)
            else:
                self.child(self.cache_lookups, name).inc(delta)
        self._cache_seen = now
        if stats.entries >= 0:
            self.cache_entries.set(stats.entries)
        if stats.hit_rate is not None:
            self.cache_hit_ratio.set(stats.hit_rate)

    def observe_results(self, nodes: Sequence[Node], results: Sequence[Result]) -> None:
        """Counts are summed per (verifier, status) first: one counter update per kind of outcome,
        not per sample; the time histogram takes every sample."""
        counts: collections.Counter[tuple[str, str]] = collections.Counter()
        timers: dict[str, Any] = {}
        for node, result in zip(nodes, results, strict=True):
            name = node.name if isinstance(node, Leaf) else "composite"
            counts[name, result.status] += 1
            timer = timers.get(name)
            if timer is None:
                timer = timers[name] = self.child(self.verifier_seconds, name)
            timer.observe(result.elapsed_ms / 1000)
        for (name, status), n in counts.items():
            self.child(self.samples, name, status).inc(n)
            if status == TIMEOUT:
                self.child(self.timeouts, name).inc(n)
            elif status == ERROR:
                self.child(self.errors, name).inc(n)

    def render(self) -> bytes:
        self.observe_cache(with_size=True)
        if not self.multiprocess:
            return generate_latest(self.registry)
        self.refresh()
        combined = CollectorRegistry()
        multiprocess.MultiProcessCollector(combined)
        combined.register(self._sessions)
        return generate_latest(combined)


class _SessionCollector:
    """The session rows, read from the session host at each scrape."""

    def __init__(self) -> None:
        self.stats: Callable[[], dict[str, Any] | None] | None = None

    def collect(self) -> list[Metric]:
        stats = None
        if self.stats is not None:
            try:
                stats = self.stats()
            except Exception:  # noqa: BLE001 (a host that cannot answer must not fail the whole scrape)
                stats = None
        stats = stats or {"live": 0, "created": 0, "ended": {}, "calls": 0, "rejected": {}}
        live = GaugeMetricFamily("rewardhub_sessions_live", "Sessions alive now", value=stats["live"])
        created = CounterMetricFamily("rewardhub_sessions_created", "Sessions created", value=stats["created"])
        ended = CounterMetricFamily("rewardhub_sessions_ended", "Sessions ended, by reason", labels=["reason"])
        for reason in ("deleted", "expired", "lifetime", "killed", "lost"):
            ended.add_metric([reason], stats["ended"].get(reason, 0))
        calls = CounterMetricFamily("rewardhub_session_calls", "Calls run in sessions", value=stats["calls"])
        rejected = CounterMetricFamily(
            "rewardhub_sessions_rejected", "Session creations refused with 429", labels=["reason"]
        )
        for reason in ("host_full", "key_full", "rate"):
            rejected.add_metric([reason], stats["rejected"].get(reason, 0))
        seconds = stats.get("call_seconds") or {"sum": 0.0, "buckets": []}
        buckets = [(repr(float(bound)), count) for bound, count in seconds["buckets"]]
        histogram = HistogramMetricFamily("rewardhub_session_call_seconds", "Wall time of one call in its session")
        histogram.add_metric([], [*buckets, ("+Inf", stats["calls"])], seconds["sum"])
        return [live, created, ended, calls, rejected, histogram]


class MetricsMiddleware:
    """Counts every HTTP answer by route template (not raw path: job ids would explode labels)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", "unmatched")
            self.metrics.child(self.metrics.requests, label, str(status["code"])).inc()
            self.metrics.child(self.metrics.request_seconds, label).observe(time.perf_counter() - started)
            self.metrics.refresh()
