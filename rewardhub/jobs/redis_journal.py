"""Job records in Redis: replicas on several machines (``job_store_url: redis://...``), and the
Celery engine's records in its own Redis. One class for both; only the liveness plug differs
(:mod:`rewardhub.jobs.liveness`).

- ``rewardhub:jobs:job:<id>``: a hash with ``status``, ``total``, ``done``, ``owner`` and, once
  finished, ``results`` (JSON) or ``error``. A running job's record lives until the retention plus
  the tombstone's time have passed since its last write; a finished one, ``retention_s``.
- ``rewardhub:jobs:expired:<id>``: written when the job ends, holding the unix time its results
  fall due to be dropped; it outlives the record by :data:`~rewardhub.jobs.records.TOMBSTONE_S`,
  so that a late poll is told that the job expired rather than that it never existed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from rewardhub.errors import ExecutionError
from rewardhub.jobs.liveness import OwnerLiveness, OwnHeartbeat
from rewardhub.jobs.records import TOMBSTONE_S, JobRecord
from rewardhub.jobs.writer import RecordWriter
from rewardhub.types import Result

__all__ = ["RedisJobJournal"]

PREFIX = "rewardhub:jobs:"
_RESULTS = TypeAdapter(list[Result])


def _job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def _tombstone_key(job_id: str) -> str:
    return f"{PREFIX}expired:{job_id}"


def _redis_errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.ConnectionError, redis.TimeoutError)


class RedisJobJournal:
    """A :class:`~rewardhub.jobs.records.JobJournal` in Redis (see the module docstring).

    ``client``: a ``redis.Redis``; ``liveness``: whose heartbeat says this process is alive.
    Construction starts the liveness, so a Redis that cannot be reached is refused at once.
    """

    def __init__(self, client: Any, retention_s: float, liveness: OwnerLiveness) -> None:
        self.client = client
        self.retention_s = retention_s
        self.liveness = liveness
        self.owner = liveness.owner
        self._errors = _redis_errors()
        self._writer = RecordWriter("rewardhub-job-records", self._errors)
        self._unreachable_is_an_error(liveness.start)

    @classmethod
    def from_url(cls, url: str, retention_s: float) -> RedisJobJournal:
        """A journal on the Redis at ``url``, alive by a heartbeat of its own."""
        try:
            import redis
        except ImportError as exc:
            raise ExecutionError(
                "job_store_url redis://... needs the redis client: pip install 'rewardhub[celery]'"
            ) from exc
        client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        return cls(client, retention_s, OwnHeartbeat(client, _redis_errors()))

    def started(self, job_id: str, total: int) -> None:
        fields = {"status": "running", "total": total, "done": 0, "owner": self.owner}
        self._unreachable_is_an_error(lambda: self._write(job_id, fields))

    def progressed(self, job_id: str, done: int) -> None:
        self._writer.progress(job_id, done, lambda j, d: self._write(j, {"done": d}))

    def finished(self, job_id: str, results: list[Result] | None, error: str | None, finished_at: float) -> None:
        fields: dict[str, Any] = {"status": "failed" if results is None else "done", "finished_at": finished_at}
        if results is not None:
            fields["results"] = _RESULTS.dump_json(results).decode()
            fields["done"] = len(results)
        if error is not None:
            fields["error"] = error
        kept_s = max(1, math.ceil(self.retention_s))  # Redis expiries are whole seconds here

        def write() -> None:
            pipe = self.client.pipeline(transaction=True)
            pipe.hset(_job_key(job_id), mapping=fields)
            pipe.expire(_job_key(job_id), kept_s)
            pipe.set(_tombstone_key(job_id), finished_at + self.retention_s, ex=kept_s + int(TOMBSTONE_S))
            pipe.execute()

        self._writer.put(write)

    def load(self, job_id: str) -> JobRecord | None:
        raw = self._unreachable_is_an_error(lambda: self.client.hgetall(_job_key(job_id)))
        raw = {k.decode(): v.decode() for k, v in raw.items()}
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
            owner_alive=self._unreachable_is_an_error(lambda: self.liveness.alive(owner)),
        )

    def expired_at(self, job_id: str) -> float | None:
        value = self._unreachable_is_an_error(lambda: self.client.get(_tombstone_key(job_id)))
        return float(value) if value is not None else None

    def close(self) -> None:
        self._writer.close()
        self.liveness.stop()

    def _write(self, job_id: str, fields: dict[str, Any]) -> None:
        """Fields of a running job; its record lives as long as a tombstone would, until it ends."""
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(_job_key(job_id), mapping=fields)
        pipe.expire(_job_key(job_id), max(1, math.ceil(self.retention_s)) + int(TOMBSTONE_S))
        pipe.execute()

    def _unreachable_is_an_error(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except self._errors as exc:
            raise ExecutionError(f"the job store is unreachable: {exc}") from exc
