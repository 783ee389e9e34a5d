"""The reward formulas against numbers computed by hand."""

from __future__ import annotations

import math

import pytest

from rewardhub.models.implicit_prm import token_steps
from rewardhub.models.scoring import (
    aggregate,
    first_below,
    implicit_token_rewards,
    normalise_outcome,
    rubric_explicit_score,
    sigmoid,
    softmax,
    step_sums,
)


def test_sigmoid_by_hand() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2)))
    assert sigmoid(-2.0) == pytest.approx(1 - sigmoid(2.0))
    assert sigmoid(-1000.0) == 0.0 and sigmoid(1000.0) == 1.0  # no overflow


def test_softmax_by_hand() -> None:
    # e^0 / (e^0 + e^ln3) = 1/4
    assert softmax([0.0, math.log(3.0)]) == pytest.approx([0.25, 0.75])
    assert softmax([1000.0, 1000.0]) == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize(
    ("how", "expected"),
    [("raw", 3.0), ("standardize", (3.0 - 1.0) / 4.0), ("sigmoid", 1 / (1 + math.exp(-0.5)))],
)
def test_outcome_normalisation(how: str, expected: float) -> None:
    assert normalise_outcome(3.0, how, mean=1.0, std=4.0) == pytest.approx(expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("how", "expected"),
    [("min", 0.2), ("product", 0.9 * 0.2 * 0.5), ("last", 0.5), ("mean", (0.9 + 0.2 + 0.5) / 3), ("sum", 1.6)],
)
def test_aggregates(how: str, expected: float) -> None:
    assert aggregate([0.9, 0.2, 0.5], how) == pytest.approx(expected)  # type: ignore[arg-type]


def test_aggregate_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError):
        aggregate([], "min")


def test_first_step_below_threshold() -> None:
    assert first_below([0.9, 0.7, 0.3, 0.1], 0.5) == 2
    assert first_below([0.9, 0.7], 0.5) == -1
    assert first_below([0.5], 0.5) == -1  # at the threshold is not below it


def test_implicit_rewards_by_hand() -> None:
    # β = 0.5: 0.5·(-1.0 - -1.5) = 0.25 and 0.5·(-2.0 - -1.0) = -0.5
    assert implicit_token_rewards([-1.0, -2.0], [-1.5, -1.0], beta=0.5) == [0.25, -0.5]


def test_implicit_rewards_are_exactly_zero_for_equal_models() -> None:
    logprobs = [-0.123456789, -7.5, -1e-9]
    assert implicit_token_rewards(logprobs, list(logprobs), beta=0.05) == [0.0, 0.0, 0.0]


def test_step_rewards_are_differences_of_the_running_sum() -> None:
    rewards = [0.1, -0.2, 0.4, 0.3, -0.1]
    steps = [0, 0, 1, 1, 2]
    q = [sum(rewards[: t + 1]) for t in range(len(rewards))]  # q_t
    ends = [1, 3, 4]  # last token of each step
    by_hand = [q[ends[0]], q[ends[1]] - q[ends[0]], q[ends[2]] - q[ends[1]]]
    assert step_sums(rewards, steps, 3) == pytest.approx(by_hand)


def test_tokens_are_assigned_to_steps_by_their_first_character() -> None:
    text = "ab\n\ncd\n\n\n\nef"
    starts = list(range(len(text)))
    steps, n = token_steps(starts, text, "\n\n")
    assert n == 3
    assert [steps[text.index(c)] for c in "abcdef"] == [0, 0, 1, 1, 2, 2]


def test_rubric_explicit_score_by_hand() -> None:
    # (3·1 + 1·0 − 2·1) / (3 + 1 + 2) = 1/6: the pitfall (weight −2) was hit
    assert rubric_explicit_score([3.0, 1.0, -2.0], [1.0, 0.0, 1.0]) == pytest.approx(1 / 6)
    assert rubric_explicit_score([3.0, 1.0, -2.0], [1.0, 1.0, 0.0]) == pytest.approx(4 / 6)
    with pytest.raises(ValueError):
        rubric_explicit_score([0.0], [1.0])
