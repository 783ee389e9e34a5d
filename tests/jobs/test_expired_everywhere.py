"""After the retention, a poll of a job is the same 404 in every mode, from every API process.

- local: one API process, the jobs in its memory;
- ``rewardhub serve --api-workers 2``: two processes on one port, sharing a sqlite journal;
- Celery: two API processes on one Redis, sharing the engine's journal (alive by its heartbeat).

Each mode accepts a job of one ``exact`` sample (scored inline, so Celery mode needs no worker)
with ``result_ttl_s: 1``; once that has passed, every process of the mode is polled, and each
answer must be the one 404 this file spells out: that the job expired, after how long, and when
(the job's end plus the retention, so two processes agree to the second).
"""

from __future__ import annotations

import calendar
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from serve_support import ATTEMPTS, api_workers, fresh

from rewardhub.server import EmbeddedServer

RETENTION_S = 1
REDIS = "redis://127.0.0.1:6379/0"
JOB = {"verifier": "exact", "samples": [{"response": "a", "reference": "a"}]}


def expired_text(job_id: str, when: str) -> str:
    """The 404 of API.md for a job past its retention, as every process must word it."""
    return (
        f"job {job_id!r} expired: its results were kept for {RETENTION_S} s after it finished "
        f"(result_ttl_s) and dropped at {when}"
    )


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


def _each_process_of_one_port(url: str, processes: int) -> Callable[[str], dict[str, httpx.Response]]:
    def poll(path: str) -> dict[str, httpx.Response]:
        answers: dict[str, httpx.Response] = {}
        for _ in range(ATTEMPTS):
            answer = fresh("GET", url + path)
            answers[answer.headers["X-Rewardhub-Pid"]] = answer
            if len(answers) == processes:
                return answers
        pytest.fail(f"only processes {sorted(answers)} answered {path}")

    return poll


@pytest.fixture(params=["local", "api-workers-2", "celery"])
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    if request.param == "local":
        with EmbeddedServer(workers=1, result_ttl_s=RETENTION_S) as url:
            yield Mode(url, _each_process_of_one_port(url, 1))
    elif request.param == "api-workers-2":
        env = {"REWARDHUB_RESULT_TTL_S": str(RETENTION_S)}
        with api_workers(tmp_path, 2, "--workers", "1", env=env) as url:
            yield Mode(url, _each_process_of_one_port(url, 2))
    else:
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
    submitted_at = time.time()
    accepted = httpx.post(f"{mode.url}/v1/jobs", json=JOB, timeout=30)
    assert accepted.status_code == 202, accepted.text
    job_id = accepted.json()["job_id"]
    for _ in range(ATTEMPTS):
        state = httpx.get(f"{mode.url}/v1/jobs/{job_id}", timeout=30).json()
        if state["status"] in ("done", "failed"):
            break
        time.sleep(0.02)
    assert state["status"] == "done" and state["results"][0]["score"] == 1.0, state
    time.sleep(RETENTION_S + 0.5)  # past the retention (waiting for it, not timing anything)

    answers = mode.poll_everywhere(f"/v1/jobs/{job_id}")
    polled_at = time.time()
    errors = {process: answer.json()["error"] for process, answer in answers.items()}
    assert {answer.status_code for answer in answers.values()} == {404}, errors
    when = next(iter(errors.values()))["message"].rpartition(" ")[2]
    for error in errors.values():
        assert error["message"] == expired_text(job_id, when)
        assert error["detail"] == {"job_id": job_id, "expired": True, "retention_s": RETENTION_S}
    dropped = calendar.timegm(time.strptime(when, "%Y-%m-%dT%H:%M:%SZ"))
    assert int(submitted_at) + RETENTION_S <= dropped <= polled_at  # the job's end plus the retention

    unknown = mode.poll_everywhere(f"/v1/jobs/{uuid.uuid4().hex}")
    for answer in unknown.values():
        assert answer.status_code == 404 and "expired" not in answer.json()["error"]["message"]
