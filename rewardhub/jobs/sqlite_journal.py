"""Job records in one sqlite file, shared by the API processes of one machine.

``job_store_url: sqlite:////abs/path`` (and the default of ``rewardhub serve --api-workers N``
without a store: a file in a temporary directory of the server). A finished job's record is kept
for the retention, then its results are dropped and the row stays as a tombstone for
:data:`~rewardhub.jobs.records.TOMBSTONE_S` more.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

from pydantic import TypeAdapter

from rewardhub.jobs.liveness import process_name
from rewardhub.jobs.records import TOMBSTONE_S, JobRecord
from rewardhub.jobs.writer import RecordWriter
from rewardhub.types import Result

__all__ = ["SqliteJobJournal"]

_RESULTS = TypeAdapter(list[Result])

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
    """A :class:`~rewardhub.jobs.records.JobJournal` in one sqlite file (WAL mode).

    An owner's liveness is its pid on this host; a record written on another host (a volume
    shared across machines, which sqlite does not support well anyway) counts as alive.
    """

    def __init__(self, path: Path, retention_s: float) -> None:
        self.path = path
        self.retention_s = retention_s
        self.owner = process_name()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        self._writer = RecordWriter("rewardhub-job-records", (sqlite3.OperationalError,))

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

    def finished(self, job_id: str, results: list[Result] | None, error: str | None, finished_at: float) -> None:
        status = "failed" if results is None else "done"
        payload = _RESULTS.dump_json(results).decode() if results is not None else None
        done = len(results) if results is not None else None

        def write() -> None:
            with self._connect() as db:
                db.execute(
                    "UPDATE jobs SET status = ?, results = ?, error = ?, finished_at = ?,"
                    " done = COALESCE(?, done) WHERE job_id = ?",
                    (status, payload, error, finished_at, done, job_id),
                )
                self._expire(db, time.time())

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
