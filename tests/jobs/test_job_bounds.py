"""A job is its submitting key's, and finished jobs' results are bounded in bytes, not only in jobs.

Each result is some 0.8-1.7 KB of Python objects: with only a count of jobs to bound them, some
150 finished jobs of 100,000 samples filled the host. The bound (``job_results_max_bytes``) drops
the oldest finished jobs from memory; a journal still answers for them, and without one their
poll says why they are gone.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from pathlib import Path

import pytest

from rewardhub.errors import NotFound
from rewardhub.jobs.sqlite_journal import SqliteJobJournal
from rewardhub.jobs.store import JobStore, result_bytes
from rewardhub.types import Result

MB = 1 << 20


def results(n: int, tag: str = "", details_chars: int = 0) -> list[Result]:
    return [
        Result(id=f"{tag}{i}", score=1.0, details={"extracted": "42", "note": "x" * details_chars}, elapsed_ms=0.5)
        for i in range(n)
    ]


def finished_jobs(store: JobStore, jobs: list[tuple[str, int]]) -> list[str]:
    """Run one job per (owner, size) to its end, one after another; their ids."""

    async def run() -> list[str]:
        ids = []
        for n, (owner, size) in enumerate(jobs):

            async def runner(progress, n=n, size=size):
                return results(size, tag=f"j{n}-")

            ids.append(store.submit(size, runner, owner))
            # the job's own task, whose end includes the store's accounting of its results
            await next(job.task for held, job in store._jobs.items() if held.endswith(ids[-1]))
        return ids

    return asyncio.run(run())


# --- whose a job is ----------------------------------------------------------------------------


def test_another_key_is_told_there_is_no_such_job() -> None:
    store = JobStore(retention_s=60)
    [job] = finished_jobs(store, [("owner-a", 3)])
    assert store.state(job, "owner-a").status == "done"
    with pytest.raises(NotFound, match="no job"):
        store.state(job, "owner-b")
    with pytest.raises(NotFound, match="no job"):
        store.state(job)  # nor does a poll that names no key


def test_another_key_is_told_so_by_another_process_too(tmp_path: Path) -> None:
    """The journal holds a job under its key as well: another API process answers the same."""
    accepting = JobStore(60, journal=SqliteJobJournal(tmp_path / "jobs.sqlite3", 60))
    polling = JobStore(60, journal=SqliteJobJournal(tmp_path / "jobs.sqlite3", 60))
    [job] = finished_jobs(accepting, [("owner-a", 3)])
    asyncio.run(accepting.close())  # writes what is queued
    state = polling.state(job, "owner-a")
    assert (state.job_id, state.status, len(state.results or [])) == (job, "done", 3)
    with pytest.raises(NotFound, match="no job"):
        polling.state(job, "owner-b")


# --- how much memory finished jobs hold -----------------------------------------------------------


def test_the_estimate_follows_what_the_results_take_in_memory() -> None:
    """Within a factor of two of tracemalloc's count, for small results and for large ones."""
    for details_chars in (0, 2000):
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        held = results(2000, details_chars=details_chars)
        measured = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert 0.5 <= result_bytes(held) / measured <= 2.0, (details_chars, result_bytes(held), measured)


def test_finished_jobs_past_the_bound_leave_memory_and_say_why() -> None:
    store = JobStore(retention_s=60, max_result_bytes=8 * MB)
    ids = finished_jobs(store, [("owner-a", 4000)] * 6)  # each ~3.5 MB by the estimate
    assert 0 < store.result_bytes <= 8 * MB
    assert store.state(ids[-1], "owner-a").status == "done"  # the newest are kept
    with pytest.raises(NotFound, match="job_results_max_bytes") as gone:
        store.state(ids[0], "owner-a")
    assert gone.value.detail == {"job_id": ids[0], "evicted": True}
    with pytest.raises(NotFound, match="no job"):  # to another key, an evicted job is no job at all
        store.state(ids[0], "owner-b")


def test_the_memory_held_stays_within_the_bound() -> None:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    store = JobStore(retention_s=60, max_result_bytes=8 * MB)
    finished_jobs(store, [("owner-a", 4000)] * 8)  # ~28 MB of results without the bound
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert held <= 12 * MB, held


def test_with_a_journal_jobs_that_left_memory_are_answered_from_it(tmp_path: Path) -> None:
    store = JobStore(60, journal=SqliteJobJournal(tmp_path / "jobs.sqlite3", 60), max_result_bytes=4 * MB)
    ids = finished_jobs(store, [("owner-a", 4000)] * 3)
    asyncio.run(store.close())  # the journal's queued writes land
    oldest = store.state(ids[0], "owner-a")
    assert (oldest.status, [r.id for r in oldest.results or []][:2]) == ("done", ["j0-0", "j0-1"])
    assert store.result_bytes <= 4 * MB
