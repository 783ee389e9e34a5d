"""``rewardhub serve --api-workers N`` as a user starts it, for the tests that need several API
processes on one port (``tests/api/test_api_workers.py``), and the 404 of an expired job that
every process of every mode must give (those tests and ``tests/jobs/test_expired_everywhere.py``).

Which process takes a connection is the kernel's choice, so :func:`fresh` opens a new connection
per request, and :func:`every_process` retries until each process has answered (each answer names
its process in ``X-Rewardhub-Pid``).
"""

from __future__ import annotations

import calendar
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
import uvicorn

from rewardhub.sandbox import SandboxUnavailable
from rewardhub.sandbox.bwrap import find_bwrap
from rewardhub.server import free_port

ATTEMPTS = 400
"""Fresh connections a test may open to reach every process."""


def needs_bubblewrap() -> None:
    """Skip the calling test or fixture, saying why, where this machine has no usable bubblewrap
    (sessions and the services that run code need it)."""
    try:
        find_bwrap("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"no bubblewrap on this machine: {exc.message}")


@contextmanager
def api_workers(here: Path, n: int, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``rewardhub serve --api-workers n *args``, until all ``n`` processes answer ``/readyz``; its URL.

    ``env``: ``REWARDHUB_*`` settings on top of this environment's. The log is ``here/serve.log``.
    """
    port = free_port()
    log = (here / "serve.log").open("w+")
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port), *args, "--api-workers", str(n)]
    environ = {**os.environ, "REWARDHUB_LOG_LEVEL": "warning", **(env or {})}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environ)
    url = f"http://127.0.0.1:{port}"
    try:
        ready: set[int] = set()
        deadline = time.monotonic() + 180
        while len(ready) < n:
            assert process.poll() is None and time.monotonic() < deadline, _tail(log)
            try:
                response = fresh("GET", f"{url}/readyz")
                if response.status_code == 200:
                    ready.add(int(response.headers["X-Rewardhub-Pid"]))
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()  # uvicorn's supervisor stops its workers, and they their pools
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def fresh(method: str, url: str, **kwargs: object) -> httpx.Response:
    """One request on a connection of its own: the kernel picks the process that answers it."""
    with httpx.Client(timeout=30) as client:
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def every_process(url: str, path: str, processes: int) -> dict[str, httpx.Response]:
    """``GET path`` answered by each of the ``processes`` behind ``url``, by process id."""
    answers: dict[str, httpx.Response] = {}
    for _ in range(ATTEMPTS):
        answer = fresh("GET", url + path)
        answers[answer.headers["X-Rewardhub-Pid"]] = answer
        if len(answers) == processes:
            return answers
    raise AssertionError(f"only processes {sorted(answers)} answered {path}")


# --- an expired job -------------------------------------------------------------------------------

ONE_SAMPLE_JOB = {"verifier": "exact", "samples": [{"response": "a", "reference": "a"}]}
"""Scored inline by every engine (no pool or worker round trip): done as soon as it is accepted."""


def finished_job(url: str) -> tuple[str, float]:
    """Submit :data:`ONE_SAMPLE_JOB` through ``url`` and poll it until done: its id and when it was sent."""
    submitted_at = time.time()
    accepted = fresh("POST", f"{url}/v1/jobs", json=ONE_SAMPLE_JOB)
    assert accepted.status_code == 202, accepted.text
    job_id = accepted.json()["job_id"]
    for _ in range(ATTEMPTS):
        state = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=30).json()
        if state["status"] in ("done", "failed"):
            break
        time.sleep(0.02)
    assert state["status"] == "done" and state["results"][0]["score"] == 1.0, state
    return job_id, submitted_at


def expired_message(job_id: str, retention_s: int, when: str) -> str:
    """The 404 of API.md for a job past its retention, word for word."""
    return (
        f"job {job_id!r} expired: its results were kept for {retention_s} s after it finished "
        f"(result_ttl_s) and dropped at {when}"
    )


def assert_expired_everywhere(
    answers: dict[str, httpx.Response], job_id: str, retention_s: int, submitted_at: float
) -> None:
    """Every answer is the one 404 of an expired job, and they agree on when it expired: the job's
    end plus the retention, wherever that is read (to the second, so two processes agree)."""
    polled_at = time.time()
    errors = {process: answer.json()["error"] for process, answer in answers.items()}
    assert {answer.status_code for answer in answers.values()} == {404}, errors
    when = next(iter(errors.values()))["message"].rpartition(" ")[2]
    for error in errors.values():
        assert error["message"] == expired_message(job_id, retention_s, when)
        assert error["detail"] == {"job_id": job_id, "expired": True, "retention_s": retention_s}
    dropped = calendar.timegm(time.strptime(when, "%Y-%m-%dT%H:%M:%SZ"))
    assert int(submitted_at) + retention_s <= dropped <= polled_at


def _tail(log: IO[str]) -> str:
    log.seek(0)
    return "rewardhub serve did not start; its log ends with:\n" + log.read()[-2000:]


@contextmanager
def in_thread(app: Any) -> Iterator[str]:
    """Any ASGI app on a free port, in a thread; its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
