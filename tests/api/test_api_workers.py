"""``rewardhub serve --api-workers 2``: two API processes on one port, each with its own local pool,
and a job submitted through one is polled through the other.

Which process takes a connection is the kernel's choice, so the test opens a fresh connection per
request and retries until both processes have answered (``X-Rewardhub-Pid`` on job answers,
``pid`` in ``/healthz``).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from rewardhub.server import ServiceProcess

ATTEMPTS = 400
SAMPLES = [
    {"id": "right", "response": "The answer is \\boxed{4}", "reference": "4"},
    {"id": "wrong", "response": "The answer is \\boxed{5}", "reference": "4"},
]


@pytest.fixture(scope="module")
def two_api_workers() -> Iterator[str]:
    with ServiceProcess(workers=1, api_workers=2, startup_timeout_s=120) as url:
        yield url


def _fresh(method: str, url: str, **kwargs: object) -> httpx.Response:
    with httpx.Client(timeout=30) as client:  # one connection per request: the kernel picks the process
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def test_both_api_processes_answer_on_the_one_port(two_api_workers: str) -> None:
    pids = set()
    for _ in range(ATTEMPTS):
        pids.add(_fresh("GET", f"{two_api_workers}/healthz").json()["pid"])
        if len(pids) == 2:
            return
    pytest.fail(f"only {pids} answered")


def test_a_job_submitted_through_one_process_is_polled_through_the_other(two_api_workers: str) -> None:
    submitted = _fresh("POST", f"{two_api_workers}/v1/jobs", json={"verifier": "math", "samples": SAMPLES})
    assert submitted.status_code == 202
    job_id, accepting_pid = submitted.json()["job_id"], submitted.headers["X-Rewardhub-Pid"]
    answers = {}  # pid -> the last state it gave
    for _ in range(ATTEMPTS):
        poll = _fresh("GET", f"{two_api_workers}/v1/jobs/{job_id}")
        assert poll.status_code == 200, poll.text
        state = poll.json()
        answers[poll.headers["X-Rewardhub-Pid"]] = state
        if len(answers) == 2 and all(s["status"] == "done" for s in answers.values()):
            break
    else:
        pytest.fail(f"answers so far: {answers}")
    other = next(pid for pid in answers if pid != accepting_pid)
    assert [(r["id"], r["score"]) for r in answers[other]["results"]] == [("right", 1.0), ("wrong", 0.0)]
    assert answers[other]["progress"] == {"done": 2, "total": 2}


def test_each_process_scores_in_its_own_pool(two_api_workers: str) -> None:
    scored_by = set()
    for _ in range(ATTEMPTS):
        response = _fresh("POST", f"{two_api_workers}/v1/jobs", json={"verifier": "math", "samples": SAMPLES[:1]})
        scored_by.add(response.headers["X-Rewardhub-Pid"])
        if len(scored_by) == 2:
            break
    assert len(scored_by) == 2
    sync = _fresh("POST", f"{two_api_workers}/v1/score", json={"verifier": "math", "samples": SAMPLES})
    assert [r["score"] for r in sync.json()["results"]] == [1.0, 0.0]


def test_an_unknown_job_is_a_404_from_every_process_and_the_service_keeps_serving(two_api_workers: str) -> None:
    pids = set()
    for _ in range(ATTEMPTS):
        poll = _fresh("GET", f"{two_api_workers}/v1/jobs/no-such-job")
        assert poll.status_code == 404
        assert "no job 'no-such-job'" in poll.json()["error"]["message"]
        pids.add(poll.headers["X-Rewardhub-Pid"])
        if len(pids) == 2:
            break
    assert len(pids) == 2
    assert _fresh("GET", f"{two_api_workers}/healthz").status_code == 200
