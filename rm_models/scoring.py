"""The formulas of the model verifiers, as pure functions of plain numbers.

Everything that turns model outputs into rewards lives here, so that each formula can be checked
against numbers computed by hand (tests/models/test_scoring.py) without loading a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "Aggregate",
    "aggregate",
    "first_below",
    "implicit_token_rewards",
    "normalise_outcome",
    "rubric_explicit_score",
    "sigmoid",
    "softmax",
    "step_sums",
]

Aggregate = Literal["min", "product", "last", "mean", "sum"]


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), written to stay finite for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def softmax(logits: Sequence[float]) -> list[float]:
    """exp(x_i - max) / Σ exp(x_j - max): the max shift keeps exp from overflowing."""
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


def normalise_outcome(raw: float, how: Literal["raw", "standardize", "sigmoid"], mean: float, std: float) -> float:
    """An outcome RM's reward from its logit.

    Bradley-Terry heads output an unbounded logit whose differences are what the model learned;
    ``raw`` keeps it, ``standardize`` gives (s - mean) / std, ``sigmoid`` gives σ((s - mean) / std).
    A bare sigmoid of a large logit saturates at 1 and flattens differences between good answers,
    which is why it is not the default.
    """
    if how == "raw":
        return raw
    z = (raw - mean) / std
    return z if how == "standardize" else sigmoid(z)


def aggregate(values: Sequence[float], how: Aggregate) -> float:
    """One number from per-step rewards: min (the weakest step), product, last, mean or sum."""
    if not values:
        raise ValueError("cannot aggregate zero steps")
    if how == "min":
        return min(values)
    if how == "product":
        return math.prod(values)
    if how == "last":
        return values[-1]
    if how == "mean":
        return sum(values) / len(values)
    if how == "sum":
        return sum(values)
    raise ValueError(f"unknown aggregate {how!r}")


def first_below(values: Sequence[float], threshold: float) -> int:
    """Index of the first step scored below ``threshold``; -1 when none is (ProcessBench's convention)."""
    for index, value in enumerate(values):
        if value < threshold:
            return index
    return -1


def implicit_token_rewards(policy_logprobs: Sequence[float], ref_logprobs: Sequence[float], beta: float) -> list[float]:
    """PRIME's implicit process reward per token (Cui et al., 2025, arXiv 2502.01456):

        r_t = β · (log π_φ(y_t | y_<t) − log π_ref(y_t | y_<t))

    With π_φ = π_ref every r_t is exactly 0: the difference of two equal floats is 0.0.
    """
    if len(policy_logprobs) != len(ref_logprobs):
        raise ValueError(f"policy has {len(policy_logprobs)} token log-probs, reference {len(ref_logprobs)}")
    return [beta * (p - r) for p, r in zip(policy_logprobs, ref_logprobs, strict=True)]


def step_sums(token_rewards: Sequence[float], token_steps: Sequence[int], n_steps: int) -> list[float]:
    """Step rewards from token rewards: PRIME's q_t = Σ_{i≤t} r_i differenced at step ends.

    q(end of step k) − q(end of step k−1) is the sum of the token rewards inside step k, which is
    what this computes directly. ``token_steps[t]`` is the step that token t belongs to.
    """
    sums = [0.0] * n_steps
    for reward, step in zip(token_rewards, token_steps, strict=True):
        sums[step] += reward
    return sums


def rubric_explicit_score(weights: Sequence[float], satisfied: Sequence[float]) -> float:
    """Rubrics-as-Rewards explicit aggregation (Gunjal et al., 2025, arXiv 2507.17746):

        score = Σ_j w_j · c_j / Σ_j |w_j|

    c_j ∈ [0, 1] is whether (or how likely) criterion j holds. A pitfall has w_j < 0, so meeting it
    lowers the score; the range is [Σ_{w<0} w / Σ|w|, Σ_{w>0} w / Σ|w|].
    """
    total = sum(abs(w) for w in weights)
    if total == 0:
        raise ValueError("a rubric needs at least one non-zero weight")
    return sum(w * c for w, c in zip(weights, satisfied, strict=True)) / total
