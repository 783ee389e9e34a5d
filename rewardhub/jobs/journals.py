"""Which journal keeps a service's job records: the one decision, made from the settings.

A job runs inside the API process that accepted it; a poll may land on any other process behind
the same port (``rewardhub serve --api-workers N``) or on another replica behind a load balancer,
so every process that may be polled reads the same records:

- ``job_store_url: sqlite:////abs/path``: one file on one machine
  (:class:`~rewardhub.jobs.sqlite_journal.SqliteJobJournal`; ``--api-workers N`` without a store
  gets one in a temporary directory of the server);
- ``job_store_url: redis://...``: replicas on several machines
  (:class:`~rewardhub.jobs.redis_journal.RedisJobJournal` with a heartbeat of its own);
- none set: the engine's own records if it keeps some (the Celery engine: the same Redis journal,
  alive by the engine's heartbeat), else with ``execution: celery`` the Celery Redis, else none:
  the jobs live in this one process.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rewardhub.jobs.records import JobJournal
from rewardhub.jobs.redis_journal import RedisJobJournal
from rewardhub.jobs.sqlite_journal import SqliteJobJournal
from rewardhub.settings import Settings

__all__ = ["celery_redis_url", "open_job_journal"]

log = logging.getLogger(__name__)


def open_job_journal(settings: Settings, engine_journal: JobJournal | None) -> JobJournal | None:
    """The journal named by ``job_store_url``, else ``engine_journal`` (the execution engine's own
    records, :meth:`~rewardhub.execution.Executor.job_journal`), else the Celery Redis, else None."""
    url = settings.job_store_url
    if url is None:
        if engine_journal is not None or settings.execution != "celery":
            return engine_journal
        url = celery_redis_url(settings)
        if url is None:
            log.warning("execution=celery on a broker that is not Redis: set job_store_url to share /v1/jobs")
            return None
    if url.startswith("sqlite:///"):
        # SQLAlchemy's form: sqlite:///relative/path, sqlite:////absolute/path
        return SqliteJobJournal(Path(url.removeprefix("sqlite:///")), settings.result_ttl_s)
    return RedisJobJournal.from_url(url, settings.result_ttl_s)


def celery_redis_url(settings: Settings) -> str | None:
    """With ``execution: celery``, the Redis it already has (result backend, else broker), if any."""
    if settings.execution != "celery":
        return None
    url = next((u for u in (settings.result_backend, settings.broker_url) if u and u.startswith("redis")), None)
    return url.split("?", 1)[0] if url else None  # Celery's transport options are not Redis's
