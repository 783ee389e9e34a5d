"""``rewardhub serve --api-workers 2``: two API processes on one port, each with its own local pool,
and a job submitted through one is polled through the other.

Which process takes a connection is the kernel's choice, so the test opens a fresh connection per
request (:func:`serve_support.fresh`) and retries until both processes have answered
(``X-Rewardhub-Pid`` on job answers, ``pid`` in ``/healthz``).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import httpx
import pytest
from serve_support import ATTEMPTS, api_workers, assert_expired_everywhere, every_process, finished_job
from serve_support import fresh as _fresh

pytestmark = pytest.mark.integration  # starts `rewardhub serve` (the tier's fixture scan does not see a Popen)

RETENTION_S = 5
"""``result_ttl_s`` of this file's server: short enough to wait out once, long enough that the other
tests here read their jobs' results before they expire."""

SLOW_PLUGIN = """
import time

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


class Slow(Verifier):
    \"\"\"Takes 8 s: a job that is still running when its API process is killed.\"\"\"

    name = "slow"
    kind = "rule"

    class Config(VerifierConfig):
        pass

    def score(self, sample: Sample, config: Config) -> Result:
        time.sleep(8)  # under the default 10 s limit per sample
        return Result.ok(1.0)
"""
SAMPLES = [
    {"id": "right", "response": "The answer is \\boxed{4}", "reference": "4"},
    {"id": "wrong", "response": "The answer is \\boxed{5}", "reference": "4"},
]


@pytest.fixture(scope="module")
def two_api_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``rewardhub serve --api-workers 2 --workers 1``, as a user starts it, until both processes are ready."""
    here = tmp_path_factory.mktemp("serve")
    (here / "slow.py").write_text(SLOW_PLUGIN)
    env = {"REWARDHUB_RESULT_TTL_S": str(RETENTION_S)}
    with api_workers(here, 2, "--workers", "1", "--plugin", str(here / "slow.py"), env=env) as url:
        yield url


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


def test_metrics_from_either_process_count_the_requests_of_both(two_api_workers: str) -> None:
    def answered(text: str) -> float:
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("rewardhub_requests_total{") and 'route="/v1/verifiers"' in line
        )

    before = answered(_fresh("GET", f"{two_api_workers}/metrics").text)
    made, pids = 0, set()
    while len(pids) < 2 and made < ATTEMPTS:
        pids.add(_fresh("GET", f"{two_api_workers}/v1/verifiers").headers["X-Rewardhub-Pid"])
        made += 1
    assert len(pids) == 2
    scrapes: dict[str, float] = {}
    for _ in range(ATTEMPTS):
        scrape = _fresh("GET", f"{two_api_workers}/metrics")
        scrapes[scrape.headers["X-Rewardhub-Pid"]] = answered(scrape.text) - before
        if len(scrapes) == 2:
            break
    # each process's scrape counts every /v1/verifiers answer, whichever process gave it
    assert scrapes == {pid: made for pid in pids}


def test_an_expired_job_is_the_same_404_from_both_processes(two_api_workers: str) -> None:
    """The ``--api-workers 2`` case of ``tests/jobs/test_expired_everywhere.py`` (a sqlite journal)."""
    job_id, submitted_at = finished_job(two_api_workers)
    time.sleep(RETENTION_S + 0.5)  # past the retention (waiting for it, not timing anything)
    answers = every_process(two_api_workers, f"/v1/jobs/{job_id}", 2)
    assert_expired_everywhere(answers, job_id, RETENTION_S, submitted_at)


def test_a_job_whose_process_is_killed_is_failed_with_the_reason_by_the_other(two_api_workers: str) -> None:
    """Last in this file: it kills one API process (uvicorn's supervisor starts another)."""
    body = {"verifier": "slow", "samples": [{"response": "a", "reference": "a"}]}
    submitted = _fresh("POST", f"{two_api_workers}/v1/jobs", json=body)
    assert submitted.status_code == 202, submitted.text
    job_id, accepting_pid = submitted.json()["job_id"], submitted.headers["X-Rewardhub-Pid"]
    os.kill(int(accepting_pid), signal.SIGKILL)
    for _ in range(ATTEMPTS):
        try:
            poll = _fresh("GET", f"{two_api_workers}/v1/jobs/{job_id}")
        except httpx.TransportError:  # a connection the dying process had accepted
            continue
        if poll.headers["X-Rewardhub-Pid"] != accepting_pid and poll.json()["status"] == "failed":
            break
        time.sleep(0.05)
    else:
        pytest.fail("no other process answered that the job failed")
    assert "stopped before the job finished" in poll.json()["error"]
    assert f":{accepting_pid}:" in poll.json()["error"]  # names the process that was lost
