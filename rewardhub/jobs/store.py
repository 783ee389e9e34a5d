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

A job belongs to the API key that submitted it: it is held, and journaled, under that key's owner
digest and its id, so a poll with another key finds nothing there (the same 404 as an unknown id).

The results held in memory are bounded in bytes (``job_results_max_bytes``), not only in jobs: a
hundred thousand results take some 80-170 MB of Python objects. Past the bound the oldest finished
jobs leave memory: with a journal they are answered from it (it holds their results already),
without one a poll of them is a 404 that says why.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import TypeAdapter

from rewardhub.errors import NotFound, Overloaded
from rewardhub.jobs.records import JobJournal, JobRecord, JobState
from rewardhub.types import Result

__all__ = ["RESULT_OVERHEAD_BYTES", "JobStore", "expired_job", "result_bytes", "unknown_job"]

log = logging.getLogger(__name__)

Runner = Callable[[Callable[[int], None]], Awaitable[list[Result]]]

RESULT_OVERHEAD_BYTES = 700
"""What a :class:`Result` costs in memory beyond its JSON text: the model, its dict and the boxed
numbers (tracemalloc: ~820 bytes for a result whose JSON is ~150)."""
_RESULTS = TypeAdapter(list[Result])


def result_bytes(results: list[Result]) -> int:
    """An estimate of the memory ``results`` hold (tested against tracemalloc's measure)."""
    return len(_RESULTS.dump_json(results)) + RESULT_OVERHEAD_BYTES * len(results)


@dataclass
class _Job:
    total: int
    status: str = "pending"
    done: int = 0
    results: list[Result] | None = None
    error: str | None = None
    finished_mono: float | None = None  # when it ended, on the clock the retention runs on here
    finished_at: float = 0.0  # the same moment as unix time, which the records and the 404 tell
    result_bytes: int = 0  # what its results hold in memory (an estimate), once finished
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class JobStore:
    """``max_result_bytes``: the finished jobs' results this process holds in memory, at most."""

    def __init__(
        self,
        retention_s: float,
        max_jobs: int = 10_000,
        journal: JobJournal | None = None,
        max_result_bytes: int | None = None,
    ) -> None:
        self.retention_s = retention_s
        self.max_jobs = max_jobs
        self.journal = journal
        self.max_result_bytes = max_result_bytes
        self.result_bytes = 0  # held by the finished jobs in self._jobs
        self._jobs: dict[str, _Job] = {}  # by held id (owner and job id), in order of submission
        self._finished: dict[str, None] = {}  # held ids of finished jobs in self._jobs, oldest end first
        self._expired: dict[str, float] = {}  # held id -> unix time its results fell due to be dropped (this process)
        self._evicted: dict[str, float] = {}  # held id -> unix time its results left memory for the bound

    def submit(self, total: int, runner: Runner, owner: str = "") -> str:
        """Start a job for ``owner`` (the submitting key's digest: only it can poll the job)."""
        self._expire()
        if len(self._jobs) >= self.max_jobs:
            raise Overloaded(f"{self.max_jobs} jobs are held; fetch or wait for some to expire", retry_after=5)
        job_id = uuid.uuid4().hex
        held = _held_id(job_id, owner)
        if self.journal is not None:
            self.journal.started(held, total)  # may refuse (store unreachable): then nothing is held
        job = self._jobs[held] = _Job(total=total)
        job.task = asyncio.create_task(self._run(held, job, runner))
        return job_id

    def state(self, job_id: str, owner: str = "") -> JobState:
        """The job as ``owner`` may see it: another key's job is a 404, as an unknown one is."""
        self._expire()
        held = _held_id(job_id, owner)
        job = self._jobs.get(held)
        if job is None:
            record = self.journal.load(held) if self.journal is not None else None
            if record is None:
                raise self._not_found(job_id, held)
            return _state_of_record(job_id, record)
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

    def _not_found(self, job_id: str, held: str) -> NotFound:
        expired_at = self._expired.get(held)
        if expired_at is None and self.journal is not None:
            expired_at = self.journal.expired_at(held)
        if expired_at is not None:
            return expired_job(job_id, self.retention_s, expired_at)
        if held in self._evicted:
            return evicted_job(job_id, self.max_result_bytes or 0)
        return unknown_job(job_id)

    async def _run(self, held: str, job: _Job, runner: Runner) -> None:
        job.status = "running"

        def progress(n: int) -> None:
            job.done = min(job.total, job.done + n)
            if self.journal is not None:
                self.journal.progressed(held, job.done)

        try:
            job.results = await runner(progress)
            job.done, job.status = job.total, "done"
        except Exception as exc:  # the job fails visibly; the service keeps serving
            log.exception("job failed")
            job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            job.finished_mono, job.finished_at = time.monotonic(), time.time()
        if self.journal is not None:
            self.journal.finished(held, job.results, job.error, job.finished_at)
        if job.results and self.max_result_bytes is not None:
            job.result_bytes = await asyncio.to_thread(result_bytes, job.results)
        if held in self._jobs:  # not closed meanwhile
            self._finished[held] = None
            self.result_bytes += job.result_bytes
            self._evict()

    def _evict(self) -> None:
        """The oldest finished jobs leave memory until the rest fit the bound: a journal answers
        for them from then on; without one their polls are told why they are gone."""
        while self.max_result_bytes is not None and self.result_bytes > self.max_result_bytes and self._finished:
            held = next(iter(self._finished))
            job = self._drop(held)
            if self.journal is None:
                self._evicted[held] = time.time()
            log.warning("finished job %s left memory: job_results_max_bytes %d reached", held[-32:], job.result_bytes)
        while len(self._evicted) > self.max_jobs * 10:
            del self._evicted[next(iter(self._evicted))]

    def _drop(self, held: str) -> _Job:
        job = self._jobs.pop(held)
        if held in self._finished:
            del self._finished[held]
            self.result_bytes -= job.result_bytes
        return job

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.retention_s
        for held in [k for k, j in self._jobs.items() if j.finished_mono is not None and j.finished_mono < cutoff]:
            self._expired[held] = self._drop(held).finished_at + self.retention_s
        while len(self._expired) > self.max_jobs * 10:  # tombstones are small, but not unbounded
            del self._expired[next(iter(self._expired))]
        for held in [k for k, at in self._evicted.items() if at + self.retention_s < time.time()]:
            del self._evicted[held]


def _held_id(job_id: str, owner: str) -> str:
    """Where a job is held and journaled: under its owner, so that no other key can name it."""
    return f"{owner}/{job_id}" if owner else job_id


def expired_job(job_id: str, retention_s: float, expired_at: float) -> NotFound:
    """The 404 of a job whose results were dropped at unix time ``expired_at``."""
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expired_at))
    return NotFound(
        f"job {job_id!r} expired: its results were kept for {retention_s:g} s after it finished "
        f"(result_ttl_s) and dropped at {when}",
        detail={"job_id": job_id, "expired": True, "retention_s": retention_s},
    )


def evicted_job(job_id: str, max_result_bytes: int) -> NotFound:
    """The 404 of a finished job whose results left memory for newer ones (no journal to hold them)."""
    return NotFound(
        f"job {job_id!r} finished, but its results were dropped to keep finished jobs' results within "
        f"job_results_max_bytes ({max_result_bytes} bytes): poll sooner, or set job_store_url to keep them",
        detail={"job_id": job_id, "evicted": True},
    )


def unknown_job(job_id: str) -> NotFound:
    return NotFound(f"no job {job_id!r}: no API process of this service accepted it", detail={"job_id": job_id})


def _state_of_record(job_id: str, record: JobRecord) -> JobState:
    """A job held by another API process, or by one that is gone (journaled under its held id)."""
    status, error = record.status, record.error
    if status in ("pending", "running") and not record.owner_alive:
        status = "failed"
        error = (
            f"the API process that ran this job ({record.owner}) stopped before the job finished "
            f"({record.done} of {record.total} samples done); its results will not come: submit the job again"
        )
    return JobState(
        job_id=job_id,
        status=status,
        results=record.results if status == "done" else None,
        progress={"done": record.done, "total": record.total},
        error=error,
    )
