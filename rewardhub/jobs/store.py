"""Asynchronous jobs: submit a batch, poll its progress, fetch the results.

A job runs in the API process that accepted it, as an asyncio task of its :class:`JobStore`; the
store answers polls of its own jobs from memory. With a journal
(:mod:`rewardhub.jobs.journals`: a shared job store, or the Celery engine's records) every job is
also recorded there, and a job this process does not hold is looked up in it: a job of another
process is answered as that process reports it, a job of a process that restarted or died is
answered ``failed`` with the reason, and its results, if it finished, are still served.

Finished jobs are kept for the retention (``result_ttl_s``). A poll after that is a 404 that says
the job expired, and when: the same words from every process and every mode, because the time is
the job's end plus the retention wherever it is read (this process's tombstones, or the journal's).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rewardhub.errors import NotFound, Overloaded
from rewardhub.jobs.records import JobJournal, JobRecord, JobState
from rewardhub.types import Result

__all__ = ["JobStore", "expired_job", "unknown_job"]

log = logging.getLogger(__name__)

Runner = Callable[[Callable[[int], None]], Awaitable[list[Result]]]


@dataclass
class _Job:
    total: int
    status: str = "pending"
    done: int = 0
    results: list[Result] | None = None
    error: str | None = None
    finished_mono: float | None = None  # when it ended, on the clock the retention runs on here
    finished_at: float = 0.0  # the same moment as unix time, which the records and the 404 tell
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class JobStore:
    def __init__(self, retention_s: float, max_jobs: int = 10_000, journal: JobJournal | None = None) -> None:
        self.retention_s = retention_s
        self.max_jobs = max_jobs
        self.journal = journal
        self._jobs: dict[str, _Job] = {}
        self._expired: dict[str, float] = {}  # job id -> unix time its results fell due to be dropped (this process)

    def submit(self, total: int, runner: Runner) -> str:
        self._expire()
        if len(self._jobs) >= self.max_jobs:
            raise Overloaded(f"{self.max_jobs} jobs are held; fetch or wait for some to expire", retry_after=5)
        job_id = uuid.uuid4().hex
        if self.journal is not None:
            self.journal.started(job_id, total)  # may refuse (store unreachable): then nothing is held
        job = self._jobs[job_id] = _Job(total=total)
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
        if self.journal is not None:
            await asyncio.to_thread(self.journal.close)

    def _not_found(self, job_id: str) -> NotFound:
        expired_at = self._expired.get(job_id)
        if expired_at is None and self.journal is not None:
            expired_at = self.journal.expired_at(job_id)
        if expired_at is not None:
            return expired_job(job_id, self.retention_s, expired_at)
        return unknown_job(job_id)

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
            job.finished_mono, job.finished_at = time.monotonic(), time.time()
        if self.journal is not None:
            self.journal.finished(job_id, job.results, job.error, job.finished_at)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.retention_s
        for job_id in [k for k, j in self._jobs.items() if j.finished_mono is not None and j.finished_mono < cutoff]:
            self._expired[job_id] = self._jobs.pop(job_id).finished_at + self.retention_s
        while len(self._expired) > self.max_jobs * 10:  # tombstones are small, but not unbounded
            del self._expired[next(iter(self._expired))]


def expired_job(job_id: str, retention_s: float, expired_at: float) -> NotFound:
    """The 404 of a job whose results were dropped at unix time ``expired_at``."""
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expired_at))
    return NotFound(
        f"job {job_id!r} expired: its results were kept for {retention_s:g} s after it finished "
        f"(result_ttl_s) and dropped at {when}",
        detail={"job_id": job_id, "expired": True, "retention_s": retention_s},
    )


def unknown_job(job_id: str) -> NotFound:
    return NotFound(f"no job {job_id!r}: no API process of this service accepted it", detail={"job_id": job_id})


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
