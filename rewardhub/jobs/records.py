"""Job records that outlive the API process that runs the job.

``/v1/jobs`` runs a job inside one API process. If that process restarts, the job's task is gone
with it; a journal keeps, outside the process, what a client polling the job must still be told:
how far it got, its results once done, and whether the process running it is still alive. An
engine that has somewhere durable to keep them offers one (:meth:`Executor.job_journal`); the
Celery engine keeps them in its Redis (:class:`~rewardhub.execution.celery_jobs.RedisJobJournal`).

The interface is small on purpose, so a shared job store for several API processes can use the
same records: ``started`` once, ``progressed`` as chunks finish, ``finished`` once, ``load`` by id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from rewardhub.types import Result

__all__ = ["JobJournal", "JobRecord"]

JobStatus = Literal["pending", "running", "done", "failed"]


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
    def started(self, job_id: str, total: int) -> None:
        """A job was accepted by this process and is about to run."""

    def progressed(self, job_id: str, done: int) -> None:
        """``done`` of its samples are finished (called as chunks finish; may be throttled)."""

    def finished(self, job_id: str, results: list[Result] | None, error: str | None) -> None:
        """The job ended: with its results, or failed with ``error``."""

    def load(self, job_id: str) -> JobRecord | None:
        """The job's record, or None when unknown or expired."""
