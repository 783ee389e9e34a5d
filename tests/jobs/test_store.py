"""A job this API process does not hold is answered from its record (Celery mode keeps them in Redis)."""

from __future__ import annotations

from rewardhub.jobs.records import JobRecord
from rewardhub.jobs.store import JobStore
from rewardhub.types import Result


class Records:
    """Records as another API process (or a dead one) left them."""

    def __init__(self, *records: JobRecord) -> None:
        self.records = {r.job_id: r for r in records}

    def started(self, job_id: str, total: int) -> None: ...

    def progressed(self, job_id: str, done: int) -> None: ...

    def finished(self, job_id: str, results: list[Result] | None, error: str | None, finished_at: float) -> None: ...

    def load(self, job_id: str) -> JobRecord | None:
        return self.records.get(job_id)

    def expired_at(self, job_id: str) -> float | None:
        return None

    def close(self) -> None: ...


def record(job_id: str, status: str, owner_alive: bool, results: list[Result] | None = None) -> JobRecord:
    return JobRecord(job_id, status, 4, 2 if status == "running" else 4, results, None, "api-1", owner_alive)  # type: ignore[arg-type]


def test_a_running_job_of_a_live_process_is_reported_as_that_process_reports_it() -> None:
    state = JobStore(60, journal=Records(record("j", "running", owner_alive=True))).state("j")
    assert (state.status, state.progress, state.error) == ("running", {"done": 2, "total": 4}, None)


def test_a_running_job_of_a_process_that_is_gone_is_failed_with_the_reason() -> None:
    state = JobStore(60, journal=Records(record("j", "running", owner_alive=False))).state("j")
    assert state.status == "failed" and state.results is None
    assert "stopped before the job finished (2 of 4 samples done)" in (state.error or "")


def test_a_finished_job_is_served_with_its_results_whoever_finished_it() -> None:
    results = [Result.ok(1.0)] * 4
    state = JobStore(60, journal=Records(record("j", "done", owner_alive=False, results=results))).state("j")
    assert state.status == "done" and state.results == results
