"""A verifier's traits: what the service needs to know about it, asked of the registry once per spec.

:meth:`Registry.traits` answers kind, inline, time limit, what it reads, cacheable and verdict key
in one value; :func:`rewardhub.compose.resolve` puts it on each leaf, and every call the scorer
makes carries it. The "inline" rule lives there alone: a verifier that says it is cheap runs in
place, unless a model scores it (those go to the micro-batcher wherever they run).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
from pydantic import Field

from rewardhub.calls import Call, run_call
from rewardhub.compose import Leaf, leaves, resolve
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.registry import Registry, Timeouts, VerifierTraits
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig


class Cheap(Verifier):
    """Inline, reads only the response."""

    name = "traits_cheap"
    version = "3"
    inline = True
    reads = ("response",)

    class Config(VerifierConfig):
        upper: bool = Field(False, description="Compare upper-cased.")

    def score(self, sample: Sample, config: Any) -> float:
        return float(bool(sample.response))


class Program(Verifier):
    name = "traits_program"
    kind = "code"

    def score(self, sample: Sample, config: Any) -> float:
        return 1.0


class Owner(Verifier):
    name = "traits_owner"
    reads_caller = True

    def score(self, sample: Sample, config: Any) -> float:
        return 1.0


class Group(Verifier):
    name = "traits_group"
    kind = "group"

    def score_group(self, samples: list[Sample], config: Any) -> list[float]:
        return [float(len(samples))] * len(samples)


def _verifier(kind: VerifierKind, inline: bool, deterministic: bool = True) -> type[Verifier]:
    attributes: dict[str, Any] = {"name": f"traits_{kind}_{inline}", "kind": kind, "inline": inline}
    attributes["deterministic"] = deterministic
    return type("Made", (Verifier,), attributes)


class CountingRegistry(Registry):
    """Counts the questions asked about verifier classes (traits, configs, classes)."""

    asked: ClassVar[list[str]] = []

    def verifier_class(self, name: str) -> type[Verifier]:
        self.asked.append(name)
        return super().verifier_class(name)


class Recording(Executor):
    """Runs every call in this process and keeps the calls it was given."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.calls: list[Call] = []

    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        self.calls.extend(calls)
        return [run_call(self.registry, call) for call in calls]


REGISTRY = Registry([Cheap, Program, Owner, Group])
TIMEOUTS = Timeouts(sample_s=5.0, code_s=20.0, model_s=60.0, max_s=30.0)


# --- the traits of one verifier and config ---------------------------------------------------------


def test_the_traits_are_what_the_class_and_the_config_say() -> None:
    config = REGISTRY.validate_config("traits_cheap", {"upper": True})
    traits = REGISTRY.traits("traits_cheap", config, TIMEOUTS)
    assert traits == VerifierTraits(
        name="traits_cheap",
        kind="rule",
        inline=True,
        timeout_s=5.0,
        reads=("response",),
        reads_caller=False,
        cacheable=True,
        verdict_key=Cheap.verdict_key(config),
    )
    assert traits.verdict_key["version"] == "3"


@pytest.mark.parametrize(
    ("kind", "says_inline", "inline"),
    [
        ("rule", True, True),
        ("rule", False, False),
        ("code", True, True),
        ("group", True, True),
        ("model", True, False),  # a model is scored by the micro-batcher, whatever the class says
        ("judge", True, False),
        ("model", False, False),
    ],
)
def test_the_inline_rule(kind: VerifierKind, says_inline: bool, inline: bool) -> None:
    cls = _verifier(kind, says_inline)
    registry = Registry([cls])
    assert registry.traits(cls.name, VerifierConfig()).inline is inline


@pytest.mark.parametrize(
    ("kind", "requested", "limit"),
    [
        ("rule", None, 5.0),  # the service's default for its kind
        ("group", None, 5.0),
        ("code", None, 20.0),
        ("model", None, 30.0),  # model_s 60 is above the cap
        ("judge", None, 30.0),
        ("rule", 12.0, 12.0),  # the config's own
        ("code", 99.0, 30.0),  # never above the cap
    ],
)
def test_the_time_limit_is_the_configs_else_the_kinds_default_under_the_cap(
    kind: VerifierKind, requested: float | None, limit: float
) -> None:
    assert TIMEOUTS.limit(kind, requested) == limit


def test_without_service_limits_a_spec_resolves_with_none() -> None:
    [leaf] = leaves(resolve("traits_cheap", REGISTRY))
    assert leaf.traits.timeout_s == math.inf


def test_group_and_sampling_verifiers_are_not_cacheable_and_a_session_reader_says_so() -> None:
    assert REGISTRY.traits("traits_group", VerifierConfig()).cacheable is False
    sampling = _verifier("rule", False, deterministic=False)
    assert Registry([sampling]).traits(sampling.name, VerifierConfig()).cacheable is False
    assert REGISTRY.traits("traits_owner", VerifierConfig()).reads_caller is True


# --- asked once per spec, carried from then on -----------------------------------------------------


def test_every_leaf_of_a_resolved_spec_carries_its_traits() -> None:
    spec = {"sum": [{"verifier": "traits_cheap", "weight": 1.0}, {"verifier": "traits_program", "weight": 1.0}]}
    found = {leaf.name: leaf for leaf in leaves(resolve(spec, REGISTRY, TIMEOUTS))}
    assert found["traits_cheap"].traits == REGISTRY.traits("traits_cheap", found["traits_cheap"].config, TIMEOUTS)
    assert found["traits_program"].traits.kind == "code"
    assert found["traits_program"].traits.timeout_s == 20.0


def test_a_spec_is_asked_of_the_registry_once_whatever_the_batch() -> None:
    registry = CountingRegistry([Cheap, Program, Group])
    spec = {
        "sum": [
            {"verifier": "traits_cheap", "weight": 1.0},
            {"verifier": "traits_program", "weight": 1.0},
            {"verifier": "traits_group", "weight": 1.0},
        ]
    }
    scorer = Scorer(registry, Recording(registry), Settings())  # the cache on: every sample has an address

    def score(batch: str) -> None:
        samples = [Sample(response=f"{batch}{i}", group=str(i % 3)) for i in range(60)]
        results = asyncio.run(scorer.score(samples, spec, cache=True))  # type: ignore[arg-type]
        assert all(result.status == "ok" for result in results)

    CountingRegistry.asked.clear()
    score("a")
    # each name: its config validated and its traits resolved, once for the spec; its instance made once
    assert Counter(CountingRegistry.asked) == {"traits_cheap": 3, "traits_program": 3, "traits_group": 3}
    CountingRegistry.asked.clear()
    score("b")
    assert CountingRegistry.asked == []  # 180 leaf verdicts later: not one question about a class


def test_the_scorers_calls_carry_the_traits_and_the_services_limits() -> None:
    executor = Recording(REGISTRY)
    settings = Settings(sample_timeout_s=4.0, code_timeout_s=7.0, max_timeout_s=9.0)
    scorer = Scorer(REGISTRY, executor, settings, cache=None)
    spec = {
        "sum": [
            {"verifier": "traits_cheap", "weight": 1.0},
            {"verifier": {"name": "traits_program", "config": {"timeout_s": 50}}, "weight": 1.0},
        ]
    }
    asyncio.run(scorer.score([Sample(response="x")], spec))  # type: ignore[arg-type]
    calls = {call.verifier: call for call in executor.calls}
    cheap, program = calls["traits_cheap"], calls["traits_program"]
    assert (cheap.inline, cheap.kind, cheap.timeout_s) == (True, "rule", 4.0)
    assert (program.inline, program.kind, program.timeout_s) == (False, "code", 9.0)
    assert program.verdict_key == program.traits.verdict_key  # type: ignore[union-attr]
    assert isinstance(program.traits, VerifierTraits)


def test_a_call_rebuilt_without_traits_is_never_inline() -> None:
    """A worker's call, rebuilt from a payload, carries no traits: it is scored where it is."""
    call = Call("traits_cheap", Cheap.Config(), (Sample(response="x"),), "rule", 1.0)
    assert (call.inline, call.reads_caller) == (False, False)
    leaf: Leaf = leaves(resolve("traits_cheap", REGISTRY))[0]
    assert Call.of(leaf.traits, leaf.config, (Sample(response="x"),)).inline is True
