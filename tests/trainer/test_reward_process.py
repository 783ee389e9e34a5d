"""Scoring from a child process: the same answers as the reward thread, errors that keep
their meaning, and no request left waiting forever when the child goes away."""

import os
import signal

import pytest
from trainer_helpers import BrokenScorer, StalledScorer, VanishingScorer

from rewardhub.background import RewardProcess, RewardProcessError, RewardThread
from rewardhub.client import ClientError
from rewardhub.trainer.config import RewardConfig
from rewardhub.trainer.rewards import service_scorer
from rewardhub.types import Sample


def samples():
    return [
        Sample(id="right", response="7", reference="7"),
        Sample(id="wrong", response="8", reference="7"),
        Sample(id="spaced", response=" 7 ", reference="7"),
    ]


def test_scores_through_the_service_as_the_reward_thread_does(service_url):
    factory = service_scorer(RewardConfig(), service_url)
    with RewardProcess(factory) as child, RewardThread(factory) as thread:
        from_child = child.submit(samples(), "exact").result(timeout=30)
        from_thread = thread.submit(samples(), "exact").result(timeout=30)
        assert child.call("health")["status"] == "ok"
    assert [r.score for r in from_child.results] == [1.0, 0.0, 1.0]  # `exact` ignores surrounding spaces
    assert [r.score for r in from_thread.results] == [1.0, 0.0, 1.0]
    assert [r.status for r in from_child.results] == ["ok"] * 3
    assert from_child.sent_at <= from_child.done_at


def test_a_service_error_reaches_the_future_with_its_status(service_url):
    with RewardProcess(service_scorer(RewardConfig(max_retries=0), service_url)) as child:
        future = child.submit(samples(), "no-such-verifier")
        with pytest.raises(ClientError) as raised:
            future.result(timeout=30)
    assert raised.value.status_code == 404


def test_a_scorer_that_cannot_open_is_reported_when_the_process_starts():
    with pytest.raises(ValueError, match="cannot open"):
        RewardProcess(BrokenScorer)


def test_a_child_that_dies_while_starting_is_reported_with_its_exit_code():
    with pytest.raises(RewardProcessError, match="exit code 3"):
        RewardProcess(VanishingScorer)


def test_a_child_that_dies_fails_its_outstanding_requests_and_refuses_new_ones():
    child = RewardProcess(StalledScorer)
    try:
        stalled = child.submit(samples())
        os.kill(child.pid, signal.SIGKILL)
        with pytest.raises(RewardProcessError, match="exited"):
            stalled.result(timeout=30)
        with pytest.raises(RewardProcessError, match="closed"):
            child.submit(samples())
    finally:
        child.close()
    child.close()  # closing twice is harmless
