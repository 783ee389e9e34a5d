"""Asynchronous jobs: submit a batch, poll its progress, fetch the results.

A job runs in the API process that accepted it. The in-process store is the embedded default;
finished jobs are dropped after the retention time (``result_ttl_s``), and a poll after that is
told the job expired. With several API processes or replicas, a shared job store
(:mod:`rewardhub.jobs.journals`, ``job_store_url``) records every job so any of them can answer.
When the engine offers a :class:`~rewardhub.jobs.records.JobJournal` (Celery mode keeps one
in Redis), every job is also recorded there, and a job this process does not hold is looked up
in it: a job of an API process that restarted or died is answered ``failed`` with the reason, and
its results, if it finished, are still served.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rewardhub.api.schemas import JobState
from rewardhub.errors import NotFound, Overloaded
from rewardhub.jobs.journals import ExpiringJournal
from rewardhub.jobs.records import JobJournal, JobRecord
from rewardhub.types import Result

__all__ = ["JobStore"]

log = logging.getLogger(__name__)

Runner = Callable[[Callable[[int], None]], Awaitable[list[Result]]]


@dataclass
class _Job:
    total: int
    status: str = "pending"
    done: int = 0
    results: list[Result] | None = None
    error: str | None = None
    finished_at: float | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class JobStore:
    def __init__(self, retention_s: float, max_jobs: int = 10_000, journal: JobJournal | None = None) -> None:
        self.retention_s = retention_s
        self.max_jobs = max_jobs
        self.journal = journal
        self._jobs: dict[str, _Job] = {}
        self._expired: dict[str, float] = {}  # job id -> unix time its results were dropped (this process)

    def submit(self, total: int, runner: Runner) -> str:
        self._expire()
        if len(self._jobs) >= self.max_jobs:
            raise Overloaded(f"{self.max_jobs} jobs are held; fetch or wait for some to expire", retry_after=5)
        job_id = uuid.uuid4().hex
        job = self._jobs[job_id] = _Job(total=total)
        if self.journal is not None:
            self.journal.started(job_id, total)
        job.task = asyncio.create_task(self._run(job_id, job, runner))
        return job_id

    def state(self, job_id: str) -> JobState:
        self._expire()
        job = self._jobs.get(job_id)
        if job is None:
            record = self.journal.load(job_id) if self.journal is not None else None
            if record is None:
                raise self._not_found(job_id)
            return _state_of_record(record)
        return JobState(
            job_id=job_id,
            status=job.status,  # type: ignore[arg-type]
            results=job.results,
            progress={"done": job.done, "total": job.total},
            error=job.error,
        )

    async def close(self) -> None:
        for job in self._jobs.values():
            if job.task is not None and not job.task.done():
                job.task.cancel()
        if isinstance(self.journal, ExpiringJournal):
            await asyncio.to_thread(self.journal.close)

    def _not_found(self, job_id: str) -> NotFound:
        expired_at = self._expired.get(job_id)
        if expired_at is None and isinstance(self.journal, ExpiringJournal):
            expired_at = self.journal.expired_at(job_id)
        if expired_at is not None:
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expired_at))
            return NotFound(
                f"job {job_id!r} expired: its results were kept for {self.retention_s:g} s after it finished "
                f"(result_ttl_s) and dropped at {when}",
                detail={"job_id": job_id, "expired": True, "retention_s": self.retention_s},
            )
        return NotFound(f"no job {job_id!r}: no API process of this service accepted it", detail={"job_id": job_id})

    async def _run(self, job_id: str, job: _Job, runner: Runner) -> None:
        job.status = "running"

        def progress(n: int) -> None:
            job.done = min(job.total, job.done + n)
            if self.journal is not None:
                self.journal.progressed(job_id, job.done)

        try:
            job.results = await runner(progress)
            job.done, job.status = job.total, "done"
        except Exception as exc:  # the job fails visibly; the service keeps serving
            log.exception("job failed")
            job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            job.finished_at = time.monotonic()
        if self.journal is not None:
            self.journal.finished(job_id, job.results, job.error)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.retention_s
        for job_id in [k for k, j in self._jobs.items() if j.finished_at is not None and j.finished_at < cutoff]:
            del self._jobs[job_id]
            self._expired[job_id] = time.time()
        while len(self._expired) > self.max_jobs * 10:  # tombstones are small, but not unbounded
            del self._expired[next(iter(self._expired))]


def _state_of_record(record: JobRecord) -> JobState:
    """A job held by another API process, or by one that is gone."""
    status, error = record.status, record.error
    if status in ("pending", "running") and not record.owner_alive:
        status = "failed"
        error = (
            f"the API process that ran this job ({record.owner}) stopped before the job finished "
            f"({record.done} of {record.total} samples done); its results will not come: submit the job again"
        )
    return JobState(
        job_id=record.job_id,
        status=status,
        results=record.results if status == "done" else None,
        progress={"done": record.done, "total": record.total},
        error=error,
    )
