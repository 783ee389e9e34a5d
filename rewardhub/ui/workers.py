"""Celery workers' own statistics for the operator page, summed over the workers that answer.

In Celery mode the API process that scored a request observes its results, so the per-verifier
figures already cover every worker; what only the workers know is how many of them there are, their
pool sizes and the tasks each has run. Celery's ``inspect().stats()`` asks them by broadcast; the
answer is cached for a few seconds so a page polling every second costs the broker one broadcast
per interval, whatever the number of open pages.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["WorkerStats", "summarise_workers"]

CACHE_S = 5.0


def summarise_workers(replies: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per worker: pool size and tasks run; in total: workers, processes and tasks (pure)."""
    workers = []
    for hostname, stats in sorted(replies.items()):
        tasks = stats.get("total") or {}
        pool = stats.get("pool") or {}
        processes = pool.get("processes") or []
        workers.append(
            {
                "hostname": hostname,
                "pid": stats.get("pid"),
                "processes": len(processes) if isinstance(processes, list) else pool.get("max-concurrency"),
                "tasks": sum(tasks.values()),
                "by_task": tasks,
                "uptime_s": stats.get("uptime"),
            }
        )
    return {
        "workers": len(workers),
        "processes": sum(w["processes"] or 0 for w in workers),
        "tasks": sum(w["tasks"] for w in workers),
        "each": workers,
    }


class WorkerStats:
    """Cached ``inspect().stats()`` of a Celery app; ``get`` blocks at most one broadcast timeout."""

    def __init__(self, celery_app: Any, timeout_s: float = 1.0) -> None:
        self.app = celery_app
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._cached: tuple[float, dict[str, Any]] | None = None

    def get(self) -> dict[str, Any]:
        with self._lock:
            if self._cached is not None and time.monotonic() - self._cached[0] < CACHE_S:
                return self._cached[1]
            try:
                replies = self.app.control.inspect(timeout=self.timeout_s).stats() or {}
                value = summarise_workers(replies)
            except Exception as exc:  # the broker may be down: the page says so, the service serves on
                value = {"workers": 0, "processes": 0, "tasks": 0, "each": [], "error": f"{type(exc).__name__}: {exc}"}
            self._cached = (time.monotonic(), value)
            return value
