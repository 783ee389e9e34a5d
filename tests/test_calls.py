"""run_call is the one place a verifier's code runs and its failures become statuses.

Every engine (pool workers, the inline path, the micro-batcher, Celery workers) goes through it,
so this table is what every engine answers: one Result per sample, never an exception, never a
failure dressed as a score.
"""

from __future__ import annotations

import math
import resource
from typing import Any, ClassVar

import pytest

from rewardhub.calls import Call, run_call
from rewardhub.errors import VerifierError
from rewardhub.registry import Registry
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig


def _overflow() -> int:
    return 10**400


class Scripted(Verifier):
    """Does what the response says."""

    name: ClassVar[str] = "scripted"

    def score(self, sample: Sample, config: VerifierConfig) -> Any:
        actions = {
            "ok": lambda: 0.75,
            "result": lambda: Result.ok(0.5, why="kept"),
            "refuse": lambda: _raise(VerifierError("gold answer does not parse")),
            "bug": lambda: _raise(KeyError("answer")),
            "memory": lambda: _raise(MemoryError()),
            "recursion": lambda: _raise(RecursionError()),
            "nan": lambda: math.nan,
            "inf": lambda: Result.ok(math.inf),
            "text": lambda: "high",
            "none": lambda: None,
            "huge": _overflow,
            "own_error": lambda: Result.failed("cannot judge", score=0.3),
        }
        return actions[sample.response]()


class Model(Verifier):
    """A batching verifier that fails the whole batch when one sample is bad."""

    name: ClassVar[str] = "model"
    kind: ClassVar[VerifierKind] = "model"
    batches: ClassVar[list[int]] = []

    def score_batch(self, samples: list[Sample], config: VerifierConfig) -> list[Result | float]:
        type(self).batches.append(len(samples))
        if any(s.response == "bad" for s in samples):
            raise RuntimeError("device fell over")
        return [float(len(s.response)) for s in samples]


class Group(Verifier):
    name: ClassVar[str] = "group"
    kind: ClassVar[VerifierKind] = "group"

    def score_group(self, samples: list[Sample], config: VerifierConfig) -> list[Result | float]:
        return [1.0] * (len(samples) - 1)  # one short


def _raise(exc: BaseException) -> Any:
    raise exc


REGISTRY = Registry([Scripted, Model, Group])
CONFIG = VerifierConfig(failure_score=-1.0)


def one(response: str) -> Result:
    [result] = run_call(REGISTRY, Call("scripted", CONFIG, (Sample(response=response),), "rule", 5.0))
    return result


@pytest.mark.parametrize(
    ("response", "status", "score", "says"),
    [
        ("ok", "ok", 0.75, None),
        ("result", "ok", 0.5, None),
        ("refuse", "error", -1.0, "gold answer does not parse"),
        ("bug", "error", -1.0, "verifier 'scripted' raised KeyError: 'answer'"),
        ("memory", "error", -1.0, "out of memory"),
        ("recursion", "error", -1.0, "recursion limit"),
        ("nan", "error", -1.0, "non-finite score"),
        ("inf", "error", -1.0, "non-finite score"),
        ("text", "error", -1.0, "not a Result or number"),
        ("none", "error", -1.0, "not a Result or number"),
        ("huge", "error", -1.0, "not a Result or number"),
        ("own_error", "error", -1.0, "cannot judge"),
    ],
)
def test_every_outcome_is_a_result_with_a_status(response: str, status: str, score: float, says: str | None) -> None:
    result = one(response)
    assert (result.status, result.score) == (status, score)
    assert result.error is None if says is None else says in (result.error or "")
    assert result.elapsed_ms > 0


def test_out_of_memory_says_how_much_address_space_the_worker_held_and_may_hold() -> None:
    """A worker's memory limit counts address space (RLIMIT_AS): the numbers say whether the
    verifier asked for too much or the process had mapped most of its limit before."""
    result = one("memory")
    assert result.details["reason"] == "memory"
    assert 0 < result.details["address_space_mb"] <= result.details["address_space_peak_mb"]
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    assert result.details.get("address_space_limit_mb") == (None if soft == resource.RLIM_INFINITY else soft // 2**20)


def test_an_unknown_verifier_is_an_error_status_not_an_exception() -> None:
    [result] = run_call(REGISTRY, Call("nowhere", CONFIG, (Sample(response="x"),), "rule", 5.0))
    assert result.status == "error" and "nowhere" in (result.error or "")


def test_a_batch_that_raises_is_retried_one_sample_at_a_time() -> None:
    Model.batches = []
    samples = tuple(Sample(response=r) for r in ("ab", "bad", "abcd"))
    results = run_call(REGISTRY, Call("model", CONFIG, samples, "model", 5.0))
    assert [(r.status, r.score) for r in results] == [("ok", 2.0), ("error", -1.0), ("ok", 4.0)]
    assert "RuntimeError: device fell over" in (results[1].error or "")
    assert Model.batches == [3, 1, 1, 1]


def test_calls_of_one_verifier_batch_together() -> None:
    calls = [Call("model", CONFIG, (Sample(response="x" * n),), "model", float(n)) for n in (1, 2, 3)]
    batch = Call.batch(calls)
    assert (len(batch.samples), batch.timeout_s) == (3, 3.0)
    assert [r.score for r in run_call(REGISTRY, batch)] == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        Call.batch([*calls, Call("scripted", CONFIG, (Sample(response="ok"),), "rule", 1.0)])


def test_a_group_answering_the_wrong_count_fails_the_whole_group() -> None:
    samples = tuple(Sample(response=str(i), group="g") for i in range(3))
    results = run_call(REGISTRY, Call("group", CONFIG, samples, "group", 5.0))
    assert [r.status for r in results] == ["error"] * 3
    assert "returned 2 results for 3 samples" in (results[0].error or "")


def test_each_result_carries_its_own_samples_id_whatever_the_outcome() -> None:
    # The service answers a one-verifier request with these objects as they come back from the
    # worker, so the id must already be the sample's own, in batches and groups and on failure.
    batch = tuple(Sample(id=f"m{i}", response=r) for i, r in enumerate(("ab", "bad", "abcd")))
    group = tuple(Sample(id=f"g{i}", response=str(i), group="g") for i in range(3))
    for call in (
        Call("scripted", CONFIG, (Sample(id="s", response="bug"),), "rule", 5.0),
        Call("scripted", CONFIG, (Sample(id="t", response="ok"),), "rule", 5.0),
        Call("model", CONFIG, batch, "model", 5.0),
        Call("group", CONFIG, group, "group", 5.0),
    ):
        results = run_call(REGISTRY, call)
        assert [r.id for r in results] == [s.id for s in call.samples]
        assert all(r.elapsed_ms == round(r.elapsed_ms, 3) for r in results)


class InlineScripted(Scripted):
    name: ClassVar[str] = "scripted_inline"
    inline: ClassVar[bool] = True


def test_the_service_answers_every_outcome_per_sample_and_keeps_serving() -> None:
    from fastapi.testclient import TestClient

    from rewardhub.api.app import create_app
    from rewardhub.settings import Settings

    client = TestClient(create_app(Settings(workers=1), registry=Registry([InlineScripted])))
    responses = ["ok", "nan", "inf", "text", "bug", "memory", "own_error"]
    body = {"verifier": "scripted_inline", "samples": [{"response": r} for r in responses]}
    answer = client.post("/v1/score", json=body)
    assert answer.status_code == 200, answer.text
    assert [r["status"] for r in answer.json()["results"]] == ["ok"] + ["error"] * 6
    again = client.post("/v1/score", json={"verifier": "scripted_inline", "samples": [{"response": "ok"}]})
    assert again.json()["results"][0]["score"] == 0.75
