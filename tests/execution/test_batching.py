"""The micro-batcher: concurrent single calls become few batches, duplicates are scored once,
and a bad sample fails alone."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import ClassVar

import pytest
from pydantic import Field

from rewardhub.errors import ExecutionError, VerifierError
from rewardhub.execution.batching import MicroBatcher
from rewardhub.registry import Registry
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig


class LengthModel(Verifier):
    """A fake model: the score is the response length. Records every batch it is given."""

    name: ClassVar[str] = "length_model"
    kind: ClassVar[VerifierKind] = "model"
    batches: ClassVar[list[list[str]]] = []
    threads: ClassVar[set[str]] = set()

    class Config(VerifierConfig):
        delay_s: float = Field(0.02, description="Pretend forward-pass time per batch.")
        scale: float = Field(1.0, description="Multiplies the score.")

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        type(self).batches.append([s.response for s in samples])
        type(self).threads.add(threading.current_thread().name)
        time.sleep(config.delay_s)
        out: list[Result | float] = []
        for s in samples:
            if s.response == "bad":
                raise VerifierError("cannot judge 'bad'")
            if s.response == "crash":
                raise RuntimeError("device fell over")
            if s.response == "nan":
                out.append(float("nan"))
                continue
            out.append(
                Result(score=len(s.response) * config.scale, details={"n": len(samples)})
                if s.response == "detailed"
                else len(s.response) * config.scale
            )
        return out


@pytest.fixture
def batcher() -> MicroBatcher:
    LengthModel.batches = []
    LengthModel.threads = set()
    return MicroBatcher(Registry([LengthModel]), max_batch_size=32, max_wait_ms=20.0)


CFG = LengthModel.Config()


async def test_64_concurrent_single_calls_become_a_few_batches(batcher: MicroBatcher) -> None:
    samples = [Sample(id=str(i), response="x" * i) for i in range(64)]
    results = await asyncio.gather(*(batcher.score("length_model", CFG, s) for s in samples))
    assert [r.score for r in results] == [float(i) for i in range(64)]
    assert [r.id for r in results] == [str(i) for i in range(64)]
    assert all(r.status == "ok" for r in results)
    sizes = [len(b) for b in LengthModel.batches]
    assert sum(sizes) == 64 and max(sizes) <= 32
    assert len(sizes) <= 4
    assert batcher.stats.batches == len(sizes) and batcher.stats.calls == 64
    await batcher.close()


async def test_model_runs_in_one_worker_thread_off_the_event_loop(batcher: MicroBatcher) -> None:
    for wave in range(3):
        await asyncio.gather(*(batcher.score("length_model", CFG, Sample(response=f"{wave}-{i}")) for i in range(5)))
    assert len(LengthModel.threads) == 1
    assert threading.current_thread().name not in LengthModel.threads
    await batcher.close()


async def test_identical_samples_are_scored_once(batcher: MicroBatcher) -> None:
    same = [Sample(id=f"dup{i}", prompt="p", response="same", reference="r") for i in range(10)]
    other = [Sample(id=f"o{i}", prompt="p", response="same", reference=f"r{i}") for i in range(5)]
    results = await asyncio.gather(*(batcher.score("length_model", CFG, s) for s in same + other))
    scored = [resp for batch in LengthModel.batches for resp in batch]
    assert len(scored) == 6  # one of the ten duplicates, and the five with other references
    assert [r.id for r in results] == [s.id for s in same + other]  # each caller gets its own id back
    assert all(r.score == 4.0 for r in results)
    assert batcher.stats.deduplicated == 9
    await batcher.close()


async def test_trajectories_with_one_final_answer_are_not_duplicates(batcher: MicroBatcher) -> None:
    def trajectory(tool_output: str) -> Sample:
        call = {"id": "c", "function": {"name": "search", "arguments": "{}"}}
        turns = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": tool_output},
            {"role": "assistant", "content": "same"},
        ]
        return Sample.model_validate({"messages": turns})

    samples = [trajectory("one"), trajectory("two"), trajectory("one")]
    await asyncio.gather(*(batcher.score("length_model", CFG, s) for s in samples))
    assert sum(len(batch) for batch in LengthModel.batches) == 2  # the conversation is part of what is judged
    assert batcher.stats.deduplicated == 1
    await batcher.close()


async def test_a_bad_sample_does_not_fail_its_batch_mates(batcher: MicroBatcher) -> None:
    responses = ["ok", "bad", "fine", "crash", "nan", "good"]
    results = await asyncio.gather(*(batcher.score("length_model", CFG, Sample(response=r)) for r in responses))
    by_response = dict(zip(responses, results, strict=True))
    assert by_response["bad"].status == "error" and by_response["bad"].error == "cannot judge 'bad'"
    assert by_response["crash"].status == "error" and "RuntimeError: device fell over" in (
        by_response["crash"].error or ""
    )
    assert by_response["nan"].status == "error" and "non-finite" in (by_response["nan"].error or "")
    assert [by_response[r].score for r in ("ok", "fine", "good")] == [2.0, 4.0, 4.0]
    assert all(by_response[r].status == "ok" for r in ("ok", "fine", "good"))
    assert len(LengthModel.batches[0]) == 6  # tried together first, then one at a time
    await batcher.close()


async def test_errors_carry_the_configured_failure_score(batcher: MicroBatcher) -> None:
    result = await batcher.score("length_model", LengthModel.Config(failure_score=-1.0), Sample(response="bad"))
    assert result.status == "error" and result.score == -1.0
    await batcher.close()


async def test_results_and_floats_both_come_back_as_results(batcher: MicroBatcher) -> None:
    detailed, plain = await asyncio.gather(
        batcher.score("length_model", CFG, Sample(response="detailed")),
        batcher.score("length_model", CFG, Sample(response="ab")),
    )
    assert detailed.details == {"n": 2, "verdict_key": LengthModel.verdict_key(CFG)}
    assert plain.score == 2.0 and plain.elapsed_ms > 0


async def test_different_configs_are_never_mixed_in_one_batch(batcher: MicroBatcher) -> None:
    double = LengthModel.Config(scale=2.0)
    calls = [batcher.score("length_model", CFG if i % 2 else double, Sample(response="x" * i)) for i in range(20)]
    results = await asyncio.gather(*calls)
    assert [r.score for r in results] == [i * (1.0 if i % 2 else 2.0) for i in range(20)]
    assert len(LengthModel.batches) >= 2
    for batch in LengthModel.batches:
        assert len({len(resp) % 2 for resp in batch}) == 1
    await batcher.close()


async def test_token_budget_caps_a_batch() -> None:
    LengthModel.batches = []
    batcher = MicroBatcher(Registry([LengthModel]), max_batch_size=32, max_wait_ms=20.0, max_batch_tokens=100)
    samples = [Sample(response=f"{i:02d}" + "y" * 98) for i in range(8)]  # ~26 estimated tokens each
    await asyncio.gather(*(batcher.score("length_model", CFG, s) for s in samples))
    assert all(sum(len(r) for r in batch) // 4 <= 100 for batch in LengthModel.batches)
    assert sum(len(b) for b in LengthModel.batches) == 8 and len(LengthModel.batches) >= 2
    await batcher.close()


async def test_timeout_is_a_status_not_a_hang(batcher: MicroBatcher) -> None:
    slow = LengthModel.Config(delay_s=0.5, timeout_s=0.05)
    result = await batcher.score("length_model", slow, Sample(response="abc"))
    assert result.status == "timeout" and result.error
    await batcher.close()


async def test_close_finishes_queued_work_then_refuses_new_calls(batcher: MicroBatcher) -> None:
    pending = [asyncio.ensure_future(batcher.score("length_model", CFG, Sample(response="x" * i))) for i in range(5)]
    await asyncio.sleep(0)
    await batcher.close()
    assert [p.result().score for p in pending] == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ExecutionError):
        await batcher.score("length_model", CFG, Sample(response="late"))
