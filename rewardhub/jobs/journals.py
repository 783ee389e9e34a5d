"""Shared job stores: ``/v1/jobs`` records that every API process and replica can read.

A job runs inside the API process that accepted it (:class:`~rewardhub.jobs.store.JobStore`); a poll
may land on any other process behind the same port (``rewardhub serve --api-workers N``) or on
another replica behind a load balancer. So each job's record (status, progress, results, the
process that runs it) is written to a store they all reach, through the
:class:`~rewardhub.jobs.records.JobJournal` interface the Celery engine's own records use:

- :class:`SqliteJobJournal`, ``job_store_url: sqlite:////abs/path``: one file on one machine (the
  default for ``--api-workers N`` without a store, in a temporary directory of the server);
- :class:`RedisJobJournal`, ``job_store_url: redis://...``: replicas on several machines.

Both keep a finished job's record for ``result_ttl_s`` (the retention), then drop its results and
keep a tombstone for :data:`TOMBSTONE_S` more, so that a late poll is told that the job *expired*
rather than that it never existed. Writes after a job's first go through one background thread,
so the event loop never waits on the store; progress is coalesced to the latest count per job.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import TypeAdapter

from rewardhub.errors import ExecutionError
from rewardhub.execution import Executor
from rewardhub.jobs.records import JobJournal, JobRecord
from rewardhub.settings import Settings
from rewardhub.types import Result

__all__ = [
    "TOMBSTONE_S",
    "ExpiringJournal",
    "RedisJobJournal",
    "SqliteJobJournal",
    "celery_redis_url",
    "open_job_journal",
]

log = logging.getLogger(__name__)

TOMBSTONE_S = 7 * 24 * 3600.0  # how long "expired" is remembered after the results are dropped
_RESULTS = TypeAdapter(list[Result])


@runtime_checkable
class ExpiringJournal(Protocol):
    """A journal that remembers jobs whose results it dropped after the retention."""

    def expired_at(self, job_id: str) -> float | None:
        """Unix time the job's results were (or fell due to be) dropped; None if not an expired job."""

    def close(self) -> None:
        """Write what is queued, then stop."""


def open_job_journal(settings: Settings, executor: Executor) -> JobJournal | None:
    """The store named by ``job_store_url``, else the engine's own records, else, with ``execution: celery``,
    the Celery Redis (result backend, else broker), else none: jobs live in this one process."""
    url = settings.job_store_url
    if url is None:
        journal = executor.job_journal()
        if journal is not None or settings.execution != "celery":
            return journal
        url = celery_redis_url(settings)
        if url is None:
            log.warning("execution=celery on a broker that is not Redis: set job_store_url to share /v1/jobs")
            return None
    if url.startswith("sqlite:///"):
        # SQLAlchemy's form: sqlite:///relative/path, sqlite:////absolute/path
        return SqliteJobJournal(Path(url.removeprefix("sqlite:///")), settings.result_ttl_s)
    return RedisJobJournal(url, settings.result_ttl_s)


def celery_redis_url(settings: Settings) -> str | None:
    """With ``execution: celery``, the Redis it already has (result backend, else broker), if any."""
    if settings.execution != "celery":
        return None
    url = next((u for u in (settings.result_backend, settings.broker_url) if u and u.startswith("redis")), None)
    return url.split("?", 1)[0] if url else None  # Celery's transport options are not Redis's


def _owner() -> str:
    """This API process, as ``host:pid:nonce`` (the nonce tells a recycled pid from its predecessor)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class _Writer:
    """One daemon thread that applies queued writes in order; progress is coalesced per job."""

    def __init__(self, name: str) -> None:
        self._ops: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._progress: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name=name, daemon=True)
        self._thread.start()

    def put(self, op: Callable[[], None]) -> None:
        self._ops.put(op)

    def progress(self, job_id: str, done: int, write: Callable[[str, int], None]) -> None:
        with self._lock:
            queued = job_id in self._progress
            self._progress[job_id] = done
        if not queued:
            self.put(lambda: self._flush(job_id, write))

    def close(self, timeout_s: float = 10.0) -> None:
        self._ops.put(None)
        self._thread.join(timeout_s)

    def _flush(self, job_id: str, write: Callable[[str, int], None]) -> None:
        with self._lock:
            done = self._progress.pop(job_id, None)
        if done is not None:
            write(job_id, done)

    def _drain(self) -> None:
        while (op := self._ops.get()) is not None:
            try:
                op()
            except Exception:  # a record falls behind; the job itself goes on and the thread keeps writing
                log.exception("could not write a job record")


# --- sqlite: one machine ------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    results TEXT,
    error TEXT,
    owner TEXT NOT NULL,
    finished_at REAL,
    expired INTEGER NOT NULL DEFAULT 0
)
"""


class SqliteJobJournal:
    """Job records in one sqlite file (WAL mode), shared by the API processes of one machine.

    An owner's liveness is its pid on this host; a record written on another host (a volume
    shared across machines, which sqlite does not support well anyway) counts as alive.
    """

    def __init__(self, path: Path, retention_s: float) -> None:
        self.path = path
        self.retention_s = retention_s
        self.owner = _owner()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        self._writer = _Writer("rewardhub-job-store")

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection (the event loop's and the writer's are never shared).

        WAL with ``synchronous=NORMAL``: a commit does not wait for the disk, so accepting a job
        costs the event loop no fsync; a power cut may lose the last records, never corrupt the file.
        """
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA synchronous=NORMAL")
        return db

    def started(self, job_id: str, total: int) -> None:
        # written at once, not queued: a job that was answered 202 must be findable from any process
        with self._connect() as db:
            db.execute(
                "INSERT INTO jobs (job_id, status, total, owner) VALUES (?, 'running', ?, ?)",
                (job_id, total, self.owner),
            )

    def progressed(self, job_id: str, done: int) -> None:
        self._writer.progress(job_id, done, self._write_progress)

    def _write_progress(self, job_id: str, done: int) -> None:
        with self._connect() as db:
            db.execute("UPDATE jobs SET done = ? WHERE job_id = ? AND status = 'running'", (done, job_id))

    def finished(self, job_id: str, results: list[Result] | None, error: str | None) -> None:
        status = "failed" if results is None else "done"
        payload = _RESULTS.dump_json(results).decode() if results is not None else None
        finished_at = time.time()

        def write() -> None:
            with self._connect() as db:
                db.execute(
                    "UPDATE jobs SET status = ?, results = ?, error = ?, finished_at = ?,"
                    " done = COALESCE(?, done) WHERE job_id = ?",
                    (status, payload, error, finished_at, len(results) if results is not None else None, job_id),
                )
                self._expire(db, finished_at)

        self._writer.put(write)

    def load(self, job_id: str) -> JobRecord | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT status, total, done, results, error, owner, finished_at, expired FROM jobs WHERE job_id = ?",
                (job_id,),
            ).fetchone()
        if row is None or self._is_expired(row[6], row[7]):
            return None
        status, total, done, results, error, owner, _, _ = row
        return JobRecord(
            job_id=job_id,
            status=status,
            total=total,
            done=done,
            results=_RESULTS.validate_json(results) if results is not None else None,
            error=error,
            owner=owner,
            owner_alive=_pid_alive(owner),
        )

    def expired_at(self, job_id: str) -> float | None:
        with self._connect() as db:
            row = db.execute("SELECT finished_at, expired FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        if row is None or not self._is_expired(row[0], row[1]):
            return None
        return row[0] + self.retention_s

    def close(self) -> None:
        self._writer.close()

    def _is_expired(self, finished_at: float | None, expired: int) -> bool:
        return bool(expired) or (finished_at is not None and finished_at + self.retention_s < time.time())

    def _expire(self, db: sqlite3.Connection, now: float) -> None:
        """Drop results past the retention (keeping a tombstone), and tombstones past theirs."""
        db.execute(
            "UPDATE jobs SET results = NULL, expired = 1 WHERE expired = 0 AND finished_at < ?",
            (now - self.retention_s,),
        )
        db.execute("DELETE FROM jobs WHERE finished_at < ?", (now - self.retention_s - TOMBSTONE_S,))


def _pid_alive(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    if host != socket.gethostname():
        return True  # another machine's process: nothing here can tell
    try:
        os.kill(int(rest.partition(":")[0]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


# --- Redis: several machines --------------------------------------------------------------------

_PREFIX = "rewardhub:jobstore:"
_HEARTBEAT_S = 2.0
_LOST_AFTER_S = 10  # an API process whose liveness key is this old is presumed gone


class RedisJobJournal:
    """Job records in Redis: one hash per job, a tombstone per finished job, a liveness key per process.

    ``<prefix>job:<id>`` holds ``status``, ``total``, ``done``, ``owner`` and, once finished,
    ``results`` (JSON) or ``error``; it expires ``retention_s`` after the job ends (a running job's
    record is kept alive by its writes and by its owner's heartbeat). ``<prefix>expired:<id>`` is
    written when the job ends and outlives the record by :data:`TOMBSTONE_S`.
    ``<prefix>api:<owner>`` is refreshed every :data:`_HEARTBEAT_S` while this process lives.
    """

    def __init__(self, url: str, retention_s: float) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ExecutionError(
                "job_store_url redis://... needs the redis client: pip install 'rewardhub[celery]'"
            ) from exc

        self.client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.retention_s = int(max(1, retention_s))
        self.owner = _owner()
        self._errors = (redis.ConnectionError, redis.TimeoutError)
        self._writer = _Writer("rewardhub-job-store")
        self._stop = threading.Event()
        self._unreachable_is_an_error(self._beat)
        threading.Thread(target=self._heartbeat, name="rewardhub-job-store-heartbeat", daemon=True).start()

    def started(self, job_id: str, total: int) -> None:
        self._unreachable_is_an_error(
            lambda: self._write(job_id, {"status": "running", "total": total, "done": 0, "owner": self.owner})
        )

    def progressed(self, job_id: str, done: int) -> None:
        self._writer.progress(job_id, done, lambda j, d: self._write(j, {"done": d}))

    def finished(self, job_id: str, results: list[Result] | None, error: str | None) -> None:
        fields: dict[str, Any] = {"status": "failed" if results is None else "done", "finished_at": time.time()}
        if results is not None:
            fields["results"] = _RESULTS.dump_json(results).decode()
            fields["done"] = len(results)
        if error is not None:
            fields["error"] = error

        def write() -> None:
            pipe = self.client.pipeline(transaction=True)
            pipe.hset(_PREFIX + "job:" + job_id, mapping=fields)
            pipe.expire(_PREFIX + "job:" + job_id, self.retention_s)
            pipe.set(_PREFIX + "expired:" + job_id, fields["finished_at"] + self.retention_s)
            pipe.expire(_PREFIX + "expired:" + job_id, self.retention_s + int(TOMBSTONE_S))
            pipe.execute()

        self._writer.put(write)

    def load(self, job_id: str) -> JobRecord | None:
        raw = self._unreachable_is_an_error(lambda: self.client.hgetall(_PREFIX + "job:" + job_id))
        raw = {k.decode(): v.decode() for k, v in raw.items()}
        if not raw:
            return None
        owner = raw.get("owner", "")
        alive = self._unreachable_is_an_error(lambda: self.client.exists(_PREFIX + "api:" + owner))
        return JobRecord(
            job_id=job_id,
            status=raw.get("status", "running"),  # type: ignore[arg-type]
            total=int(raw.get("total", 0)),
            done=int(raw.get("done", 0)),
            results=_RESULTS.validate_json(raw["results"]) if "results" in raw else None,
            error=raw.get("error"),
            owner=owner,
            owner_alive=bool(alive),
        )

    def expired_at(self, job_id: str) -> float | None:
        value = self._unreachable_is_an_error(lambda: self.client.get(_PREFIX + "expired:" + job_id))
        return float(value) if value is not None else None

    def close(self) -> None:
        self._stop.set()
        self._writer.close()
        try:
            self.client.delete(_PREFIX + "api:" + self.owner)  # polls learn at once that our jobs are gone
        except self._errors:
            pass

    def _write(self, job_id: str, fields: dict[str, Any]) -> None:
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(_PREFIX + "job:" + job_id, mapping=fields)
        pipe.expire(_PREFIX + "job:" + job_id, self.retention_s + int(TOMBSTONE_S))  # until it ends
        pipe.execute()

    def _beat(self) -> None:
        self.client.set(_PREFIX + "api:" + self.owner, "1", ex=_LOST_AFTER_S)

    def _heartbeat(self) -> None:
        while not self._stop.wait(_HEARTBEAT_S):
            try:
                self._beat()
            except self._errors as exc:
                log.warning("job store heartbeat failed: %s", exc)

    def _unreachable_is_an_error(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except self._errors as exc:
            raise ExecutionError(f"the job store is unreachable: {exc}") from exc
