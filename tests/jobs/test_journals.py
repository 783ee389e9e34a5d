"""Journals: a job accepted by one API process is answered by any other that reads the same records.

Two :class:`JobStore` objects on one journal stand for two API processes (the end-to-end tests
are ``tests/api/test_api_workers.py`` and ``test_expired_everywhere.py``). Each test runs on sqlite
(one machine), on the Redis the test machine runs with the journal's own heartbeat (several
machines), and on the same Redis with the Celery engine's liveness keys (Celery mode).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rewardhub.errors import NotFound
from rewardhub.execution.celery_jobs import CeleryJobLiveness
from rewardhub.execution.celery_liveness import Heartbeat, Liveness
from rewardhub.jobs.journals import open_job_journal
from rewardhub.jobs.records import JobJournal
from rewardhub.jobs.redis_journal import RedisJobJournal
from rewardhub.jobs.sqlite_journal import SqliteJobJournal
from rewardhub.jobs.store import JobStore
from rewardhub.settings import Settings
from rewardhub.types import Result

REDIS_URL = "redis://127.0.0.1:6379/0"


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except Exception:
        return False


Opener = Callable[[float], JobJournal]


def celery_journal(retention_s: float) -> tuple[RedisJobJournal, Heartbeat]:
    """What a Celery-mode API process has: its engine's heartbeat, and the journal that reads it."""
    import redis

    liveness = Liveness(redis.Redis.from_url(REDIS_URL), lost_after_s=10, ttl_s=60)
    instance = uuid.uuid4().hex
    heartbeat = Heartbeat(liveness, "api", instance, 1.0, (redis.ConnectionError,))
    heartbeat.start()
    return RedisJobJournal(liveness.client, retention_s, CeleryJobLiveness(liveness, instance)), heartbeat


@pytest.fixture(params=["sqlite", "redis", "redis-celery-liveness"])
def open_journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens journals on one shared store, as separate API processes would; closes them after."""
    opened: list[JobJournal] = []
    heartbeats: list[Heartbeat] = []
    if request.param.startswith("redis") and not _redis_up():
        pytest.skip("no Redis on 127.0.0.1:6379")

    def opener(retention_s: float) -> JobJournal:
        journal: JobJournal
        if request.param == "sqlite":
            journal = SqliteJobJournal(tmp_path / "jobs.sqlite3", retention_s)
        elif request.param == "redis":
            journal = RedisJobJournal.from_url(REDIS_URL, retention_s)
        else:
            journal, heartbeat = celery_journal(retention_s)
            heartbeats.append(heartbeat)
        opened.append(journal)
        return journal

    yield opener
    for journal in opened:
        journal.close()
    for heartbeat in heartbeats:
        heartbeat.stop(forget=True)


def _results(n: int) -> list[Result]:
    return [Result(id=str(i), score=1.0, status="ok") for i in range(n)]


async def _poll_until_done(store: JobStore, job_id: str) -> object:
    for _ in range(500):
        state = store.state(job_id)
        if state.status in ("done", "failed"):
            return state
        await asyncio.sleep(0.02)
    raise AssertionError("the job never finished")


def test_a_job_accepted_by_one_process_is_answered_by_another(open_journal: Opener) -> None:
    async def scenario() -> None:
        accepting = JobStore(retention_s=60, journal=open_journal(60))
        polling = JobStore(retention_s=60, journal=open_journal(60))
        release = asyncio.Event()

        async def runner(progress: Callable[[int], None]) -> list[Result]:
            progress(2)
            await release.wait()
            return _results(3)

        job_id = accepting.submit(3, runner)
        running = polling.state(job_id)  # the record is written before the 202: findable at once
        assert running.status == "running"
        assert running.progress["total"] == 3
        release.set()
        done = await _poll_until_done(polling, job_id)
        assert done.status == "done"
        assert [r.id for r in done.results] == ["0", "1", "2"]
        assert done.progress == {"done": 3, "total": 3}
        await accepting.close()

    asyncio.run(scenario())


def test_a_failed_job_is_failed_with_its_error_everywhere(open_journal: Opener) -> None:
    async def scenario() -> None:
        accepting = JobStore(retention_s=60, journal=open_journal(60))
        polling = JobStore(retention_s=60, journal=open_journal(60))

        async def runner(progress: Callable[[int], None]) -> list[Result]:
            raise RuntimeError("the engine went away")

        job_id = accepting.submit(1, runner)
        failed = await _poll_until_done(polling, job_id)
        assert failed.status == "failed"
        assert "the engine went away" in failed.error
        assert failed.results is None

    asyncio.run(scenario())


def test_after_the_retention_a_poll_is_a_404_that_says_the_job_expired(open_journal: Opener) -> None:
    async def scenario() -> None:
        accepting = JobStore(retention_s=60, journal=open_journal(60))
        # a zero retention: the other process finds the results already past it
        polling = JobStore(retention_s=0, journal=open_journal(0))

        async def runner(progress: Callable[[int], None]) -> list[Result]:
            return _results(1)

        job_id = accepting.submit(1, runner)
        await _poll_until_done(accepting, job_id)
        await accepting.close()  # its record is written through
        if isinstance(polling.journal, RedisJobJournal):
            polling.journal.client.delete(f"rewardhub:jobs:job:{job_id}")  # what Redis's TTL does
        with pytest.raises(NotFound, match="expired") as caught:
            polling.state(job_id)
        assert caught.value.detail["expired"] is True

    asyncio.run(scenario())


def test_an_unknown_job_is_a_404_that_does_not_claim_it_expired(open_journal: Opener) -> None:
    store = JobStore(retention_s=60, journal=open_journal(60))
    with pytest.raises(NotFound) as caught:
        store.state(uuid.uuid4().hex)
    assert "expired" not in caught.value.message


def test_in_one_process_an_expired_job_is_also_said_to_have_expired() -> None:
    async def scenario() -> None:
        store = JobStore(retention_s=0)

        async def runner(progress: Callable[[int], None]) -> list[Result]:
            return _results(1)

        job_id = store.submit(1, runner)
        await asyncio.sleep(0.05)
        while store._jobs.get(job_id) is not None and store._jobs[job_id].finished_at is None:
            await asyncio.sleep(0.02)
        with pytest.raises(NotFound, match=r"expired: its results were kept for 0 s"):
            store.state(job_id)

    asyncio.run(scenario())


def test_a_running_job_of_a_process_that_is_gone_is_failed_with_the_reason(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    journal = SqliteJobJournal(tmp_path / "jobs.sqlite3", 60)
    journal.owner = f"{journal.owner.split(':')[0]}:{int(dead.stdout)}:gone"
    journal.started("j1", 4)
    state = JobStore(retention_s=60, journal=SqliteJobJournal(tmp_path / "jobs.sqlite3", 60)).state("j1")
    assert state.status == "failed"
    assert "stopped before the job finished" in state.error


@pytest.mark.skipif(not _redis_up(), reason="no Redis on 127.0.0.1:6379")
def test_a_closed_redis_owner_is_seen_gone_at_once() -> None:
    owner = RedisJobJournal.from_url(REDIS_URL, 60)
    job_id = uuid.uuid4().hex
    owner.started(job_id, 2)
    reader = RedisJobJournal.from_url(REDIS_URL, 60)
    try:
        assert reader.load(job_id).owner_alive
        owner.close()
        assert not reader.load(job_id).owner_alive
    finally:
        reader.close()


def test_the_journal_follows_the_settings(tmp_path: Path) -> None:
    engines = SqliteJobJournal(tmp_path / "engine.db", 60)  # stands for an engine's own records
    sqlite = open_job_journal(Settings(job_store_url=f"sqlite:///{tmp_path}/a/jobs.db"), engines)
    assert isinstance(sqlite, SqliteJobJournal)
    assert sqlite.path == tmp_path / "a" / "jobs.db"  # the store named in the settings wins
    sqlite.close()
    assert open_job_journal(Settings(), engines) is engines
    assert open_job_journal(Settings(), None) is None
    with pytest.raises(ValueError, match="job_store_url"):
        Settings(job_store_url="postgres://db/jobs")


@pytest.mark.skipif(not _redis_up(), reason="no Redis on 127.0.0.1:6379")
def test_celery_mode_keeps_job_records_in_its_redis_unless_the_engine_keeps_its_own() -> None:
    settings = Settings(execution="celery", broker_url=REDIS_URL + "?visibility_timeout=3600")
    journal = open_job_journal(settings, None)
    assert isinstance(journal, RedisJobJournal)
    journal.close()
    rabbit = Settings(execution="celery", broker_url="amqp://guest@127.0.0.1:5672//")
    assert open_job_journal(rabbit, None) is None


def test_an_unreachable_redis_store_is_refused_at_start_with_the_reason() -> None:
    from rewardhub.errors import ExecutionError

    with pytest.raises(ExecutionError, match="job store is unreachable"):
        RedisJobJournal.from_url("redis://127.0.0.1:1/0", 60)
