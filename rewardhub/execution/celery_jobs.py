"""``/v1/jobs`` records in the Celery engine's Redis, so a job outlives the API process that runs it.

One hash per job, ``rewardhub:job:<id>``, with ``status``, ``total``, ``done``, ``owner`` (the API
process's instance id, whose liveness key says whether it is still there), and once finished
``results`` (JSON) or ``error``; it expires ``result_ttl_s`` after its last write. Writes after
the first go through one background thread, so the event loop never waits on Redis; progress is
coalesced to the latest count per job.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from rewardhub.errors import ExecutionError
from rewardhub.execution.celery_app import CONNECTION_ERRORS
from rewardhub.execution.celery_liveness import PREFIX, Liveness
from rewardhub.jobs.records import JobRecord
from rewardhub.types import Result

__all__ = ["RedisJobJournal"]

log = logging.getLogger(__name__)

_RESULTS = TypeAdapter(list[Result])


def _key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


class RedisJobJournal:
    """A :class:`~rewardhub.jobs.records.JobJournal` in Redis (see the module docstring)."""

    def __init__(self, liveness: Liveness, instance: str, ttl_s: int) -> None:
        self.liveness = liveness
        self.client = liveness.client
        self.instance = instance
        self.ttl_s = ttl_s
        self._ops: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._progress: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def started(self, job_id: str, total: int) -> None:
        # written at once, not queued: a job that was answered 202 must have a record
        self._write(job_id, {"status": "running", "total": total, "done": 0, "owner": self.instance})

    def progressed(self, job_id: str, done: int) -> None:
        with self._lock:
            queued = job_id in self._progress
            self._progress[job_id] = done
        if not queued:
            self._enqueue(lambda: self._flush_progress(job_id))

    def finished(self, job_id: str, results: list[Result] | None, error: str | None) -> None:
        fields: dict[str, Any] = {"status": "failed" if results is None else "done"}
        if results is not None:
            fields["results"] = _RESULTS.dump_json(results).decode()
            fields["done"] = len(results)
        if error is not None:
            fields["error"] = error
        self._enqueue(lambda: self._write(job_id, fields))

    def load(self, job_id: str) -> JobRecord | None:
        try:
            return self._load(job_id)
        except CONNECTION_ERRORS as exc:
            raise ExecutionError(f"job records are unreachable: {exc}") from exc

    def _load(self, job_id: str) -> JobRecord | None:
        raw = {k.decode(): v.decode() for k, v in self.client.hgetall(_key(job_id)).items()}
        if not raw:
            return None
        owner = raw.get("owner", "")
        return JobRecord(
            job_id=job_id,
            status=raw.get("status", "running"),  # type: ignore[arg-type]
            total=int(raw.get("total", 0)),
            done=int(raw.get("done", 0)),
            results=_RESULTS.validate_json(raw["results"]) if "results" in raw else None,
            error=raw.get("error"),
            owner=owner,
            owner_alive=bool(owner) and owner in self.liveness.alive("api", [owner]),
        )

    # --- writing -----------------------------------------------------------------------------
    def _write(self, job_id: str, fields: dict[str, Any]) -> None:
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.hset(_key(job_id), mapping=fields)
            pipe.expire(_key(job_id), self.ttl_s)
            pipe.execute()
        except CONNECTION_ERRORS as exc:  # the job itself goes on; only its record is behind
            log.warning("could not record job %s: %s", job_id, exc)

    def _flush_progress(self, job_id: str) -> None:
        with self._lock:
            done = self._progress.pop(job_id, None)
        if done is not None:
            self._write(job_id, {"done": done})

    def _enqueue(self, op: Callable[[], None]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="rewardhub-job-journal", daemon=True)
            self._thread.start()
        self._ops.put(op)

    def _drain(self) -> None:
        while True:
            self._ops.get()()
