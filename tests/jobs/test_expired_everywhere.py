"""After the retention, a poll of a job is the same 404 in every mode, from every API process.

- local: one API process, the jobs in its memory;
- Celery: two API processes on one Redis, sharing the engine's journal (alive by its heartbeat);
- ``rewardhub serve --api-workers 2``: two processes on one port sharing a sqlite journal, in
  ``tests/api/test_api_workers.py`` (it reuses that file's server rather than start another).

Each mode accepts a job of one ``exact`` sample (scored inline, so Celery mode needs no worker)
with ``result_ttl_s: 1``; once that has passed, every process of the mode is polled, and each
answer must be the one 404 of :func:`serve_support.assert_expired_everywhere`: that the job
expired, after how long, and when.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest
from serve_support import assert_expired_everywhere, every_process, finished_job

from rewardhub.server import EmbeddedServer

RETENTION_S = 1
REDIS = "redis://127.0.0.1:6379/0"


@dataclass
class Mode:
    url: str  # where the job is submitted
    poll_everywhere: Callable[[str], dict[str, httpx.Response]]  # process -> its answer to GET path


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS, socket_connect_timeout=1).ping())
    except Exception:
        return False


@pytest.fixture(params=["local", "celery"])
def mode(request: pytest.FixtureRequest) -> Iterator[Mode]:
    if request.param == "local":
        with EmbeddedServer(workers=1, result_ttl_s=RETENTION_S) as url:
            yield Mode(url, lambda path: every_process(url, path, 1))
        return
    if not _redis_up():
        pytest.skip("no Redis on 127.0.0.1:6379")
    celery = {
        "execution": "celery",
        "broker_url": f"{REDIS}?queue_prefix=t{uuid.uuid4().hex[:8]}-",
        "result_ttl_s": RETENTION_S,
    }
    with EmbeddedServer(**celery) as first, EmbeddedServer(**celery) as second:

        def poll(path: str) -> dict[str, httpx.Response]:
            return {url: httpx.get(url + path, timeout=30) for url in (first, second)}

        yield Mode(first, poll)


@pytest.mark.integration
def test_an_expired_job_is_the_same_404_in_every_mode_from_every_process(mode: Mode) -> None:
    job_id, submitted_at = finished_job(mode.url)
    time.sleep(RETENTION_S + 0.5)  # past the retention (waiting for it, not timing anything)
    assert_expired_everywhere(mode.poll_everywhere(f"/v1/jobs/{job_id}"), job_id, RETENTION_S, submitted_at)

    unknown = mode.poll_everywhere(f"/v1/jobs/{uuid.uuid4().hex}")
    for answer in unknown.values():
        assert answer.status_code == 404 and "expired" not in answer.json()["error"]["message"]
