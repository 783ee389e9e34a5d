"""Length shaping beyond DAPO's overlong penalty: three rewards that weigh length by correctness.

``length`` (DAPO) penalises length alone. These three know whether the response was right, from
``correctness`` (a registered rule verifier consulted per sample, e.g. ``math``) or, without it,
from ``metadata[correct_key]`` (a bool, or the reward as a number); a sample whose correctness
cannot be read is an ``error`` naming the field, never a guess. Length is ``metadata.response_tokens``
when the trainer sends it (the only exact count), else words or characters, as ``length`` counts.

- ``length_pass_rate`` (group), prime-rl's linear length penalty (``LinearLengthPenaltyConfig``,
  output-token term; ``src/prime_rl/orchestrator/algo/grpo.py`` at 559b447; prime-rl is not on
  PyPI, so the tests check numbers worked by hand), subtracted from each reward before the
  group baseline:

      penalty_i = w · p · L_i / max(1, max_j L_j),   p = mean_j r_j (the group's pass rate)

  The score is ``-penalty_i``: add it to the correctness reward with ``{"sum": [...]}`` and the
  sum is prime-rl's shaped reward. A group that solves nothing is not pushed to be short.

- ``length_group_relative`` (group), the group-relative length reward of Kimi k1.5 (Kimi Team,
  2025, arXiv 2501.12599, §2.3.3). It was asked for after miles's recipes, but neither miles's
  tree (radixark/miles) nor its package (miles-rl 0.0.2) ships a length reward to compare with:

      λ_i = 0.5 - (L_i - L_min) / (L_max - L_min)
      reward_i = w · λ_i if correct, w · min(0, λ_i) if not;   0 for all when L_max = L_min

  Short correct answers gain up to +0.5 w, long ones lose up to -0.5 w; a wrong answer is never
  rewarded for being short. Also a term to add to correctness.

- ``cosine_length`` (per sample), the cosine-scaled reward of "Demystifying Long Chain-of-Thought
  Reasoning in LLMs" (Yeo et al., 2025, arXiv 2502.03373, eq. 1), a whole reward, not a term:

      r(L) = r_T + ½ (r_0 - r_T) (1 + cos(π L / L_max))        for L < L_max
      (r_0, r_T) = (2, 1) if correct, (-10, 0) if wrong;  r = -10 at L >= L_max (truncated)

  so correct answers are worth more the shorter they are, and wrong ones less the shorter they
  are (thinking longer is encouraged when wrong).

What this does not judge: whether the length was spent well. Counted in words, a response can
look short by gluing text without spaces; send ``metadata.response_tokens`` (or count ``chars``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from rewardhub.errors import VerifierError
from rewardhub.registry import ENTRY_POINT_GROUP
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig, as_result

from .length import measure

__all__ = [
    "CosineLengthVerifier",
    "LengthGroupRelativeVerifier",
    "LengthPassRateVerifier",
    "cosine_length_reward",
    "group_relative_length_reward",
    "pass_rate_length_penalty",
]


# --- the formulas ---------------------------------------------------------------------------------


def pass_rate_length_penalty(rewards: Sequence[float], lengths: Sequence[int], weight: float) -> list[float]:
    """prime-rl's penalty ``w · mean(r) · L_i / max(1, max L)`` per sample (see the module docstring)."""
    if not rewards:
        return []
    pass_rate = sum(rewards) / len(rewards)
    longest = max(1, max(lengths))
    return [weight * pass_rate * length / longest for length in lengths]


def group_relative_length_reward(correct: Sequence[bool], lengths: Sequence[int], weight: float = 1.0) -> list[float]:
    """Kimi k1.5's length reward per sample (see the module docstring)."""
    if not lengths:
        return []
    shortest, longest = min(lengths), max(lengths)
    if longest == shortest:
        return [0.0] * len(lengths)
    rewards = []
    for ok, length in zip(correct, lengths, strict=True):
        lam = 0.5 - (length - shortest) / (longest - shortest)
        rewards.append(weight * (lam if ok else min(0.0, lam)))
    return rewards


def cosine_length_reward(
    length: int,
    correct: bool,
    max_length: int,
    correct_rewards: tuple[float, float] = (2.0, 1.0),
    wrong_rewards: tuple[float, float] = (-10.0, 0.0),
    exceed_reward: float = -10.0,
) -> float:
    """The cosine-scaled reward (see the module docstring); rewards are (at length 0, at max_length)."""
    if length >= max_length:
        return exceed_reward
    at_zero, at_max = correct_rewards if correct else wrong_rewards
    return at_max + 0.5 * (at_zero - at_max) * (1.0 + math.cos(math.pi * length / max_length))


# --- where correctness comes from -----------------------------------------------------------------


class Correctness(BaseModel):
    """A rule verifier consulted for each sample's correctness."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verifier: str = Field(min_length=1, description="A registered rule verifier, e.g. `math`.")
    config: dict[str, Any] = Field(default_factory=dict, description="Its config.")


class ShapingConfig(VerifierConfig):
    correctness: Correctness | None = Field(
        None, description="A rule verifier that judges each sample; without it, metadata[correct_key] is read."
    )
    correct_key: str = Field(
        "correct", min_length=1, description="Metadata field holding a bool or the sample's reward (a number)."
    )
    threshold: float = Field(1.0, description="A reward at or above it counts as correct.")
    unit: Literal["words", "chars"] = Field("words", description="Unit when metadata.response_tokens is absent.")


@dataclass(frozen=True)
class _Judged:
    reward: float
    length: int
    unit: str


_rules: dict[str, Verifier] = {}


def _rule(name: str) -> Verifier:
    rule = _rules.get(name)
    if rule is None:
        found = list(entry_points(group=ENTRY_POINT_GROUP, name=name))
        if not found:
            raise VerifierError(f"correctness.verifier {name!r} is not an installed verifier")
        cls = found[0].load()
        if not (isinstance(cls, type) and issubclass(cls, Verifier)) or cls.kind != "rule":
            raise VerifierError(f"correctness.verifier {name!r} is not a rule verifier")
        rule = _rules[name] = cls()
    return rule


def _reward(sample: Sample, config: ShapingConfig) -> float:
    """The sample's reward, from the correctness verifier or its metadata; VerifierError if unreadable."""
    if config.correctness is not None:
        name = config.correctness.verifier
        rule = _rule(name)
        try:
            rule_config = rule.Config.model_validate(config.correctness.config)
        except ValueError as exc:
            raise VerifierError(f"invalid correctness.config for {name!r}: {exc}") from exc
        verdict = as_result(rule.score(sample, rule_config))
        if verdict.status != "ok":
            raise VerifierError(f"correctness verifier {name!r} could not judge: {verdict.error}")
        return verdict.score
    value = sample.metadata.get(config.correct_key)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if value is None:
        raise VerifierError(f"metadata.{config.correct_key} is missing (or set correctness to a rule verifier)")
    raise VerifierError(f"metadata.{config.correct_key} must be a bool or a finite number, not {value!r}")


def _judge_all(samples: list[Sample], config: ShapingConfig) -> tuple[dict[int, _Judged], dict[int, Result]]:
    judged: dict[int, _Judged] = {}
    failed: dict[int, Result] = {}
    for i, sample in enumerate(samples):
        try:
            reward = _reward(sample, config)
        except VerifierError as exc:
            failed[i] = Result.failed(exc.message, score=config.failure_score)
            continue
        length, unit = measure(sample, config.unit)
        judged[i] = _Judged(reward, length, unit)
    return judged, failed


def _in_order(n: int, failed: dict[int, Result], scored: dict[int, Result]) -> list[Result]:
    return [failed[i] if i in failed else scored[i] for i in range(n)]


# --- the verifiers --------------------------------------------------------------------------------


class LengthPassRateVerifier(Verifier):
    """Linear length penalty scaled by the group's pass rate (prime-rl), a term to add to correctness."""

    name: ClassVar[str] = "length_pass_rate"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "group"

    class Config(ShapingConfig):
        weight: float = Field(0.25, ge=0, description="w: the penalty of the longest response at pass rate 1.")

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        judged, failed = _judge_all(samples, config)
        keys = sorted(judged)
        rewards = [judged[i].reward for i in keys]
        penalties = pass_rate_length_penalty(rewards, [judged[i].length for i in keys], config.weight)
        pass_rate = sum(rewards) / len(rewards) if rewards else None
        scored = {
            i: Result.ok(
                -penalty,
                length=judged[i].length,
                unit=judged[i].unit,
                reward=judged[i].reward,
                pass_rate=pass_rate,
                judged_in_group=len(keys),
            )
            for i, penalty in zip(keys, penalties, strict=True)
        }
        return _in_order(len(samples), failed, scored)


class LengthGroupRelativeVerifier(Verifier):
    """Group-relative length reward (Kimi k1.5): shorter than the group helps only correct answers."""

    name: ClassVar[str] = "length_group_relative"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "group"

    class Config(ShapingConfig):
        weight: float = Field(1.0, ge=0, description="w: scales λ, which lies in [-0.5, 0.5].")

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        judged, failed = _judge_all(samples, config)
        keys = sorted(judged)
        correct = [judged[i].reward >= config.threshold for i in keys]
        lengths = [judged[i].length for i in keys]
        rewards = group_relative_length_reward(correct, lengths, config.weight)
        scored = {
            i: Result.ok(
                reward,
                length=judged[i].length,
                unit=judged[i].unit,
                correct=ok,
                min_length=min(lengths),
                max_length=max(lengths),
                judged_in_group=len(keys),
            )
            for i, ok, reward in zip(keys, correct, rewards, strict=True)
        }
        return _in_order(len(samples), failed, scored)


class CosineLengthVerifier(Verifier):
    """Cosine-scaled reward (Yeo et al., 2025): correctness and length in one reward."""

    name: ClassVar[str] = "cosine_length"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "rule"

    class Config(ShapingConfig):
        max_length: int = Field(4096, gt=0, description="L_max: the generation limit; at or past it, exceed_reward.")
        correct_rewards: tuple[float, float] = Field(
            (2.0, 1.0), description="(r_0, r_T) of a correct answer: its reward at length 0 and at max_length."
        )
        wrong_rewards: tuple[float, float] = Field(
            (-10.0, 0.0), description="(r_0, r_T) of a wrong answer: its reward at length 0 and at max_length."
        )
        exceed_reward: float = Field(-10.0, description="Reward of a response at or past max_length.")

    def score(self, sample: Sample, config: Config) -> Result:
        correct = _reward(sample, config) >= config.threshold
        length, unit = measure(sample, config.unit)
        reward = cosine_length_reward(
            length, correct, config.max_length, config.correct_rewards, config.wrong_rewards, config.exceed_reward
        )
        return Result.ok(reward, length=length, unit=unit, correct=correct, exceeded=length >= config.max_length)
