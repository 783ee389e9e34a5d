"""The score pipeline's hook for the operator page: observe results, share them, read everyone's.

``observe`` runs on the event loop inside the one score path (``rewardhub.api.pipeline``), so it
only queues references to the request's samples and results (they are frozen); they are counted
in this process's :class:`~rewardhub.ui.stats.ProcessStats`, and rows built for the last samples,
when the snapshot is next built. A daemon thread writes the snapshot to the shared store once a second when something changed, so a slow Redis or
a busy sqlite file never delays an answer to a trainer; a read flushes first, so the process that
answers a poll always counts its own latest samples.

The snapshot also carries the reward cache's figures (:meth:`StatsRecorder.watch_cache`), read
from the cache when the snapshot is written, outside the lock: asking Redis for its size must not
hold up ``observe`` on the event loop.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rewardhub.cache import RewardCache
from rewardhub.compose import Leaf, Node
from rewardhub.types import Result, Sample
from rewardhub.ui.stats import Outcome, ProcessStats, merge
from rewardhub.ui.store import StatsStore

__all__ = ["StatsRecorder", "public_url", "sample_entry"]

log = logging.getLogger(__name__)

MAX_QUEUED = 1000  # requests observed but not yet counted, before observe counts them itself
ANSWER_KEYS = ("extracted", "extracted_answer", "answer", "prediction", "parsed", "normalized_response")


class StatsRecorder:
    def __init__(
        self,
        store: StatsStore,
        show_samples: bool = True,
        recent_limit: int = 200,
        text_chars: int = 4000,
        flush_every_s: float = 1.0,
    ) -> None:
        self.store = store
        self.show_samples = show_samples
        self.text_chars = text_chars
        self.flush_every_s = flush_every_s
        self.process = _process_key()
        self.stats = ProcessStats(recent_limit=recent_limit)
        self._seq = 0
        self._unbuilt: deque[tuple[int, float, str, str | None, Sample, Result]] = deque(maxlen=recent_limit)
        self._observed: list[tuple[float, Sequence[Node], Sequence[Result], Sequence[Sample], str | None]] = []
        self._dirty = True  # write an empty snapshot at start: the process counts among the processes
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.cache: RewardCache | None = None

    def watch_cache(self, cache: RewardCache | None) -> None:
        """Share ``cache``'s figures with every snapshot (the scorer's cache; None: no cache)."""
        self.cache = cache
        self._dirty = True

    def cache_figures(self) -> dict[str, Any] | None:
        """The watched cache's counts and entries as :func:`~rewardhub.ui.stats.merge_cache` adds them up."""
        if self.cache is None:
            return None
        stats = self.cache.stats(with_size=True)  # entries -1: the backend did not answer
        return {
            "backend": public_url(self.cache.url),
            "hits": stats.hits,
            "misses": stats.misses,
            "corrupt": stats.corrupt,
            "stores": stats.stores,
            "errors": stats.errors,
            "entries": stats.entries,
            "evictions": dict(stats.evictions),
        }

    def observe(self, samples: Sequence[Sample], nodes: Sequence[Node], results: Sequence[Result], run: str | None):
        """Queue a request's results; they are counted when the snapshot is next built.

        This runs on the event loop once per request, a thousand times a second under OpenRLHF's
        one-sample calls: it only appends, and the counting happens in batches on the writer
        thread (or in :meth:`read`, which flushes first)."""
        with self._lock:
            self._observed.append((time.time(), nodes, results, samples, run))
            self._dirty = True
            if len(self._observed) >= MAX_QUEUED:  # no writer thread (or a stalled one): count here
                self._count()

    def _count(self) -> None:
        """Count every queued request; keep details of the last ``recent_limit`` samples only (lock held)."""
        observed, self._observed = self._observed, []
        by_scope: dict[tuple[str, str | None, int], list[Outcome]] = {}  # (verifier, run, second)
        for now, nodes, results, samples, run in observed:
            names = [node.name if isinstance(node, Leaf) else "composite" for node in nodes]
            for name, result in zip(names, results, strict=True):
                outcome = (result.status, result.score, result.elapsed_ms, result.error)
                by_scope.setdefault((name, run, int(now)), []).append(outcome)
            for index in range(max(0, len(results) - self.stats.recent_limit), len(results)):
                self._seq += 1  # the row is built when it is shared
                self._unbuilt.append((self._seq, now, names[index], run, samples[index], results[index]))
        for (name, run, second), outcomes in by_scope.items():
            self.stats.add_many(name, run, outcomes, float(second))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="rewardhub-ui-stats", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        try:
            self.flush()
        except Exception as exc:  # the store may be gone at shutdown; the counts die with the process
            log.warning("could not write the last UI statistics: %r", exc)
        self.store.close()

    def flush(self) -> None:
        if not self._dirty:  # read unlocked: a request observed meanwhile sets it again for the next flush
            return
        cache = self.cache_figures()  # outside the lock (a Redis round trip)
        with self._lock:
            self._count()
            while self._unbuilt:
                seq, now, verifier, run, sample, result = self._unbuilt.popleft()
                key = f"{self.process}-{seq}"
                entry = sample_entry(key, now, verifier, run, sample, result, self.show_samples, self.text_chars)
                entry["seq"] = seq  # orders a batch's samples, which share one time
                self.stats.remember(entry)
            self.stats.cache = cache
            snapshot = self.stats.snapshot()
            self._dirty = False
        try:
            self.store.put(self.process, snapshot)
        except Exception:
            self._dirty = True
            raise

    def read(self) -> dict[str, Any]:
        """The merged figures of every process sharing the store (blocking: call it in a thread)."""
        self.flush()
        return merge(self.store.all(), recent_limit=self.stats.recent_limit)

    def _loop(self) -> None:
        while not self._stopping.wait(self.flush_every_s):
            try:
                self.flush()
            except Exception as exc:  # keep trying: the store may come back
                log.warning("could not write UI statistics: %r", exc)


def sample_entry(
    key: str,
    now: float,
    verifier: str,
    run: str | None,
    sample: Sample,
    result: Result,
    show_samples: bool,
    text_chars: int,
) -> dict[str, Any]:
    """One row of the page's sample list, plus the full JSON it links to (no text when private)."""
    details = result.details if show_samples else _numbers_only(result.details)
    components = result.details.get("components")
    answer = next((result.details[k] for k in ANSWER_KEYS if result.details.get(k) is not None), None)
    entry: dict[str, Any] = {
        "key": key,
        "ts": now,
        "id": sample.id,
        "verifier": verifier,
        "run": run,
        "status": result.status,
        "score": result.score,
        "error": result.error,
        "elapsed_ms": result.elapsed_ms,
        "reason": details.get("reason") if isinstance(details.get("reason"), str) else None,
        "answer": _clip(str(answer), 200) if show_samples and answer is not None else None,
        "components": (
            {name: part.get("score") for name, part in components.items() if isinstance(part, dict)}
            if isinstance(components, dict)
            else None
        ),
        "result": {**result.model_dump(mode="json"), "details": details},
        "sample": None,
    }
    if show_samples:
        dumped = sample.model_dump(mode="json", exclude_none=True)
        entry["sample"] = _clip_texts(dumped, text_chars)
        entry["result"] = _clip_texts(entry["result"], text_chars)
    return entry


def _numbers_only(details: dict[str, Any]) -> dict[str, Any]:
    """Details without text: numbers, booleans and short reason codes, and components' scores."""
    kept: dict[str, Any] = {}
    for name, value in details.items():
        if isinstance(value, bool | int | float):
            kept[name] = value
        elif name == "reason" and isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value):
            kept[name] = value
        elif name == "components" and isinstance(value, dict):
            kept[name] = {
                label: {k: part[k] for k in ("score", "status", "weight") if k in part}
                for label, part in value.items()
                if isinstance(part, dict)
            }
    return kept


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def _clip_texts(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return _clip(value, limit)
    if isinstance(value, dict):
        return {k: _clip_texts(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_texts(v, limit) for v in value[:1000]]
    return value


def public_url(url: str) -> str:
    """A backend URL without its credentials (``redis://:secret@host`` is shown as ``redis://host``)."""
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))


def _process_key() -> str:
    host = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24] or "host"
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
