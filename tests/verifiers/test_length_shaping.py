"""Length shaping: prime-rl's pass-rate-scaled penalty, Kimi k1.5's group-relative reward, the cosine reward.

Every number below is worked by hand from the formulas in ``verifiers/length_shaping.py``.
"""

from __future__ import annotations

import math
from importlib.metadata import entry_points

import pytest

from rewardhub.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.types import Sample
from rewardhub.verifiers.length_shaping import (
    CosineLengthVerifier,
    LengthGroupRelativeVerifier,
    LengthPassRateVerifier,
    cosine_length_reward,
    group_relative_length_reward,
    pass_rate_length_penalty,
)


def group(pairs, **metadata):
    """Samples of one group from (correct, response_tokens) pairs."""
    return [
        Sample(response="x", group="g", metadata={"correct": c, "response_tokens": n, **metadata}) for c, n in pairs
    ]


# --- the formulas, by hand --------------------------------------------------------------------------


def test_pass_rate_penalty_worked_example():
    # p = mean(1, 1, 0, 0) = 0.5; max L = 400; w = 0.25: penalty = 0.25 * 0.5 * L / 400 = L / 3200
    penalties = pass_rate_length_penalty([1.0, 1.0, 0.0, 0.0], [100, 200, 400, 50], weight=0.25)
    assert penalties == pytest.approx([0.03125, 0.0625, 0.125, 0.015625])


def test_pass_rate_penalty_vanishes_when_nothing_is_solved_and_guards_zero_lengths():
    assert pass_rate_length_penalty([0.0, 0.0], [10, 500], weight=0.25) == [0.0, 0.0]
    # max(1, max L): empty responses do not divide by zero; fractional rewards are the pass rate
    assert pass_rate_length_penalty([0.5, 0.5], [0, 0], weight=1.0) == [0.0, 0.0]
    assert pass_rate_length_penalty([1.0, 0.5], [10, 20], weight=1.0) == pytest.approx([0.375, 0.75])


def test_group_relative_worked_example():
    # L_min 100, L_max 500: λ = 0.5 - (L - 100) / 400 -> 0.5, 0, 0.5, -0.5; wrong answers get min(0, λ)
    rewards = group_relative_length_reward([True, True, False, False], [100, 300, 100, 500])
    assert rewards == pytest.approx([0.5, 0.0, 0.0, -0.5])
    assert group_relative_length_reward([True, False], [7, 7]) == [0.0, 0.0]  # no spread, no reward
    assert group_relative_length_reward([True, True], [0, 10], weight=0.2) == pytest.approx([0.1, -0.1])


@pytest.mark.parametrize(
    ("length", "correct", "expected"),
    [
        (0, True, 2.0),  # r_0 of a correct answer
        (250, True, 1.0 + 0.5 * (1 + math.sqrt(0.5))),  # cos(π/4) = √½: 1.853553...
        (500, True, 1.5),  # cos(π/2) = 0: halfway between 2 and 1
        (500, False, -5.0),  # halfway between -10 and 0
        (0, False, -10.0),  # a wrong answer is worth least when short
        (1000, True, -10.0),  # at L_max: truncated, the exceed reward whatever the answer
        (1500, False, -10.0),
    ],
)
def test_cosine_reward_worked_values(length, correct, expected):
    assert cosine_length_reward(length, correct, max_length=1000) == pytest.approx(expected)


def test_cosine_reward_orders_lengths_by_correctness():
    correct = [cosine_length_reward(n, True, 1000) for n in (10, 400, 900)]
    wrong = [cosine_length_reward(n, False, 1000) for n in (10, 400, 900)]
    assert correct == sorted(correct, reverse=True) and wrong == sorted(wrong)
    assert min(correct) > max(wrong)


# --- the verifiers ----------------------------------------------------------------------------------


def test_pass_rate_verifier_scores_the_negated_penalty():
    results = LengthPassRateVerifier().score_group(
        group([(True, 100), (True, 200), (False, 400), (False, 50)]), LengthPassRateVerifier.Config()
    )
    assert [r.score for r in results] == pytest.approx([-0.03125, -0.0625, -0.125, -0.015625])
    assert results[0].details["pass_rate"] == 0.5 and results[0].details["unit"] == "tokens"


def test_group_relative_verifier_matches_the_formula():
    results = LengthGroupRelativeVerifier().score_group(
        group([(True, 100), (True, 300), (False, 100), (False, 500)]), LengthGroupRelativeVerifier.Config()
    )
    assert [r.score for r in results] == pytest.approx([0.5, 0.0, 0.0, -0.5])
    assert [r.details["correct"] for r in results] == [True, True, False, False]


def test_cosine_verifier_reads_a_number_as_the_reward_against_the_threshold():
    cfg = CosineLengthVerifier.Config(max_length=1000, threshold=0.5)
    right = CosineLengthVerifier().score(Sample(response="x", metadata={"correct": 0.7, "response_tokens": 500}), cfg)
    wrong = CosineLengthVerifier().score(Sample(response="x", metadata={"correct": 0.2, "response_tokens": 500}), cfg)
    assert (right.score, wrong.score) == pytest.approx((1.5, -5.0))


def test_correctness_from_a_rule_verifier():
    samples = [
        Sample(response="Paris", reference="Paris", group="g", metadata={"response_tokens": 10}),
        Sample(response="Lyon", reference="Paris", group="g", metadata={"response_tokens": 30}),
        Sample(response="Paris", reference="Paris", group="g", metadata={"response_tokens": 50}),
    ]
    cfg = LengthGroupRelativeVerifier.Config(correctness={"verifier": "exact"})
    results = LengthGroupRelativeVerifier().score_group(samples, cfg)
    # L 10..50: λ = 0.5, 0, -0.5; the wrong middle one gets min(0, 0) = 0
    assert [r.score for r in results] == pytest.approx([0.5, 0.0, -0.5])
    assert [r.details["correct"] for r in results] == [True, False, True]


def test_words_are_counted_without_tokens_and_chars_catch_glued_padding():
    padded = Sample(response="x" * 3000 + " so the answer is 7", metadata={"correct": True})
    words = CosineLengthVerifier().score(padded, CosineLengthVerifier.Config(max_length=1000))
    chars = CosineLengthVerifier().score(padded, CosineLengthVerifier.Config(max_length=1000, unit="chars"))
    assert words.details == {"length": 6, "unit": "words", "correct": True, "exceeded": False}
    assert chars.details["length"] == 3019 and chars.score == -10.0


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({}, "metadata.correct is missing"),
        ({"correct": "yes"}, "metadata.correct must be a bool or a finite number"),
        ({"correct": float("nan")}, "metadata.correct must be a bool or a finite number"),
    ],
)
def test_unreadable_correctness_is_that_samples_error(metadata, message):
    samples = [
        Sample(response="x", group="g", metadata={"correct": True, "response_tokens": 10}),
        Sample(response="x", group="g", metadata={**metadata, "response_tokens": 99}),
        Sample(response="x", group="g", metadata={"correct": True, "response_tokens": 30}),
    ]
    registry = Registry([LengthGroupRelativeVerifier])
    call = Call("length_group_relative", LengthGroupRelativeVerifier.Config(), tuple(samples), "group", 10.0)
    first, bad, last = run_call(registry, call)
    assert bad.status == "error" and message in (bad.error or "") and bad.score == 0.0
    # the other two are scored among themselves: L 10 and 30
    assert (first.status, first.score, last.score) == ("ok", 0.5, -0.5)
    assert first.details["judged_in_group"] == 2


def test_a_correctness_verifier_that_cannot_judge_is_an_error():
    cfg = CosineLengthVerifier.Config(correctness={"verifier": "exact", "config": {"no_such_field": 1}})
    [result] = run_call(
        Registry([CosineLengthVerifier]), Call("cosine_length", cfg, (Sample(response="x"),), "rule", 10)
    )
    assert result.status == "error" and "correctness.config" in (result.error or "")
    cfg = CosineLengthVerifier.Config(correctness={"verifier": "no_such_verifier"})
    [result] = run_call(
        Registry([CosineLengthVerifier]), Call("cosine_length", cfg, (Sample(response="x"),), "rule", 10)
    )
    assert result.status == "error" and "not an installed verifier" in (result.error or "")


@pytest.mark.parametrize("cls", [LengthPassRateVerifier, LengthGroupRelativeVerifier, CosineLengthVerifier])
def test_registered_and_documented(cls):
    assert all(field.description for name, field in cls.Config.model_fields.items())
    (ep,) = entry_points(group="rewardhub.verifiers", name=cls.name)
    assert ep.load() is cls
