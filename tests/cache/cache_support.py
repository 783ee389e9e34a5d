"""An in-process executor that counts what it runs, and the verifiers the cache tests score with."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from rewardhub.calls import Call, run_call
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.registry import Registry
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


class Counting(Executor):
    """Runs every call through run_call in this process; ``samples`` counts the samples judged."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.samples = 0

    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        self.samples += sum(len(call.samples) for call in calls)
        return [run_call(self.registry, call) for call in calls]


class Match(Verifier):
    """1 when the response equals the reference; reads nothing else. ``error`` for a missing reference."""

    name = "cache_match"
    version = "1"
    reads = ("response", "reference")

    class Config(VerifierConfig):
        strip: bool = Field(True, description="Compare without surrounding whitespace.")

    def score(self, sample: Sample, config: Config) -> Result:
        if sample.reference is None:
            return Result.failed("no reference to compare with")
        response = sample.response.strip() if config.strip else sample.response
        return Result.ok(
            float(response == sample.reference), reason="equal" if response == sample.reference else "differ"
        )


class MatchV2(Match):
    version = "2"


class Length(Verifier):
    """The response's length, a verifier that reads every field (the default)."""

    name = "cache_length"

    def score(self, sample: Sample, config: VerifierConfig) -> float:
        return float(len(sample.response))


class GroupCount(Verifier):
    name = "cache_group_count"
    kind = "group"

    def score_group(self, samples: list[Sample], config: VerifierConfig) -> list[float]:
        return [float(len(samples))] * len(samples)
