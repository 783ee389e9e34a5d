"""What a poll of a job is told, and the one protocol every keeper of job records speaks.

``/v1/jobs`` runs a job inside one API process (:class:`~rewardhub.jobs.store.JobStore`). A poll
may land on another process, or come after the job's own process restarted; a journal keeps,
outside the process, what that poll must still be told: how far the job got, its results once
done, whether the process running it is still alive, and, once its results were dropped after the
retention (``result_ttl_s``), that the job *expired* rather than never existed. That last fact is a
tombstone, kept :data:`TOMBSTONE_S` after the results are gone.

Journals: :class:`~rewardhub.jobs.sqlite_journal.SqliteJobJournal` (one machine) and
:class:`~rewardhub.jobs.redis_journal.RedisJobJournal` (several machines, and the Celery engine's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from rewardhub.types import Result

__all__ = ["TOMBSTONE_S", "JobJournal", "JobRecord", "JobState", "JobStatus"]

TOMBSTONE_S = 7 * 24 * 3600.0
"""How long "expired" is remembered after a job's results are dropped."""

JobStatus = Literal["pending", "running", "done", "failed"]


class JobState(BaseModel):
    """The answer to ``GET /v1/jobs/{job_id}`` (API.md)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    status: JobStatus
    results: list[Result] | None = None
    progress: dict[str, int]
    error: str | None = None


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    status: JobStatus
    total: int
    done: int
    results: list[Result] | None
    error: str | None
    owner: str  # the API process that runs (or ran) the job
    owner_alive: bool


class JobJournal(Protocol):
    """``started`` once, ``progressed`` as chunks finish, ``finished`` once; ``load`` and
    ``expired_at`` by id from any process. Writes after ``started`` may be queued (never on the
    event loop's time); ``close`` writes what is queued."""

    def started(self, job_id: str, total: int) -> None:
        """A job was accepted by this process and is about to run: written before the 202 is sent."""

    def progressed(self, job_id: str, done: int) -> None:
        """``done`` of its samples are finished (called as chunks finish; may be coalesced)."""

    def finished(self, job_id: str, results: list[Result] | None, error: str | None, finished_at: float) -> None:
        """The job ended at unix time ``finished_at``: with its results, or failed with ``error``."""

    def load(self, job_id: str) -> JobRecord | None:
        """The job's record, or None when unknown or expired."""

    def expired_at(self, job_id: str) -> float | None:
        """Unix time the job's results were (or fell due to be) dropped; None if not an expired job."""

    def close(self) -> None:
        """Write what is queued, then stop; this process's jobs are no longer alive."""
