"""The names ``algorithm.advantage`` and ``algorithm.policy_loss`` accept, and what each one runs.

These two tables are the only place a name meets its function. The configuration validates names
against their keys and the trainer looks its estimator and loss up here, so adding one is a pure
function (next to its siblings, with a test computed by hand) and one entry below.

An entry adapts its function to one calling convention, because the papers' functions take
different things: an outcome estimator sees one reward per sample, a token-level one per-token
rewards, PRIME the dense rewards of an implicit PRM too. ``settings`` is the algorithm section of
the configuration (anything with the attributes an entry reads); entries read their
hyperparameters from it by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from .advantages import (
    broadcast_to_tokens,
    dr_grpo_advantages,
    grpo_advantages,
    prime_advantages,
    reinforce_pp_advantages,
    reinforce_pp_baseline_advantages,
    remax_advantages,
    rloo_advantages,
    terminal_token_rewards,
)
from .losses import cispo_loss, gspo_loss, ppo_clip_loss

__all__ = [
    "ADVANTAGE_ESTIMATORS",
    "POLICY_LOSSES",
    "AdvantageEstimator",
    "AdvantageInputs",
    "PolicyLoss",
    "advantage_estimator",
    "per_sample",
    "policy_loss",
]


@dataclass(frozen=True)
class AdvantageInputs:
    """Everything an estimator may read, for P prompts with G samples each (B = P * G rows)."""

    rewards: Tensor  # [P, G] shaped outcome rewards, 0 where not valid
    valid: Tensor  # [P, G] bool: samples that enter the loss
    mask: Tensor  # [B, T] bool: response tokens of the valid samples
    token_penalty: Tensor  # [B, T] -beta * KL per token when the KL is in the reward, else zeros
    dense: Tensor  # [B, T] per-token rewards from ``Result.steps``; zeros unless the estimator reads them
    greedy: Tensor | None = None  # [P] shaped rewards of each prompt's greedy response, when the estimator needs them
    greedy_valid: Tensor | None = None  # [P] bool: the greedy responses that were judged (and not masked)


@dataclass(frozen=True)
class AdvantageEstimator:
    """An estimator as the trainer runs it: ``compute(inputs, settings) -> [B, T]``, 0 outside the mask."""

    compute: Callable[[AdvantageInputs, Any], Tensor]
    group_relative: bool
    """It compares the samples of a group, so it needs ``rollout.group_size >= 2``."""
    dense_rewards: bool = False
    """It reads ``inputs.dense``: the trainer turns each result's ``steps`` into per-token rewards."""
    greedy_baseline: bool = False
    """It reads ``inputs.greedy``: the trainer generates one greedy response per prompt and has it scored."""


PolicyLoss = Callable[[Tensor, Tensor, Tensor, Tensor, Any], tuple[Tensor, Tensor]]
"""``(logp, old_logp, advantages, mask, settings) -> (loss [B, T], clipped [B, T])``, as in losses.py."""


def per_sample(estimator: Callable[[Tensor, Tensor, Any], Tensor]) -> Callable[[AdvantageInputs, Any], Tensor]:
    """An outcome estimator (``rewards, valid [P, G], settings -> [P, G]``) in the table's convention.

    A KL penalty in the reward counts in the sequence's reward (the sum over its tokens), and
    each sample's advantage is shared by all of its tokens.
    """

    def compute(x: AdvantageInputs, settings: Any) -> Tensor:
        sequence_rewards = x.rewards + (x.token_penalty * x.mask).sum(-1).view_as(x.rewards)
        return broadcast_to_tokens(estimator(sequence_rewards, x.valid, settings), x.mask)

    return compute


def _reinforce_pp(x: AdvantageInputs, settings: Any) -> Tensor:
    token_rewards = terminal_token_rewards(x.rewards.reshape(-1), x.mask) + x.token_penalty
    return reinforce_pp_advantages(token_rewards, x.mask, settings.gamma)


def _remax(x: AdvantageInputs, settings: Any) -> Tensor:
    """ReMax on the sequence rewards (a KL penalty in the reward counts in the sampled responses'
    rewards only: the greedy baseline is its bare reward, which keeps the gradient unbiased)."""
    if x.greedy is None or x.greedy_valid is None:
        raise ValueError("remax needs the rewards of each prompt's greedy response (inputs.greedy)")
    sequence_rewards = x.rewards + (x.token_penalty * x.mask).sum(-1).view_as(x.rewards)
    return broadcast_to_tokens(remax_advantages(sequence_rewards, x.valid, x.greedy, x.greedy_valid), x.mask)


ADVANTAGE_ESTIMATORS: dict[str, AdvantageEstimator] = {
    "grpo": AdvantageEstimator(per_sample(lambda r, v, s: grpo_advantages(r, v, s.std_eps)), group_relative=True),
    "dr_grpo": AdvantageEstimator(per_sample(lambda r, v, s: dr_grpo_advantages(r, v)), group_relative=True),
    "rloo": AdvantageEstimator(per_sample(lambda r, v, s: rloo_advantages(r, v)), group_relative=True),
    "reinforce_pp": AdvantageEstimator(_reinforce_pp, group_relative=False),
    "reinforce_pp_baseline": AdvantageEstimator(
        lambda x, s: reinforce_pp_baseline_advantages(x.rewards, x.valid, x.token_penalty, x.mask, s.gamma),
        group_relative=True,
    ),
    "prime": AdvantageEstimator(
        lambda x, s: prime_advantages(
            x.rewards, x.valid, x.dense + x.token_penalty, x.mask, dense_coef=s.prime_dense_coef, gamma=s.gamma
        ),
        group_relative=True,
        dense_rewards=True,
    ),
    "remax": AdvantageEstimator(_remax, group_relative=False, greedy_baseline=True),
}
"""``algorithm.advantage`` -> estimator (rewardhub.trainer.algorithms.advantages)."""

POLICY_LOSSES: dict[str, PolicyLoss] = {
    "ppo_clip": lambda logp, old, adv, mask, s: ppo_clip_loss(logp, old, adv, s.clip_low, s.clip_high, s.dual_clip),
    "gspo": lambda logp, old, adv, mask, s: gspo_loss(logp, old, adv, mask, s.gspo_clip_low, s.gspo_clip_high),
    "cispo": lambda logp, old, adv, mask, s: cispo_loss(logp, old, adv, None, s.clip_high),  # the paper: no lower bound
}
"""``algorithm.policy_loss`` -> per-token loss (rewardhub.trainer.algorithms.losses)."""


def advantage_estimator(name: str) -> AdvantageEstimator:
    """The entry of ``name``; a ValueError naming the known ones otherwise."""
    return _lookup(ADVANTAGE_ESTIMATORS, name, "advantage estimator")


def policy_loss(name: str) -> PolicyLoss:
    """The entry of ``name``; a ValueError naming the known ones otherwise."""
    return _lookup(POLICY_LOSSES, name, "policy loss")


def _lookup(table: dict[str, Any], name: str, what: str) -> Any:
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; expected one of {', '.join(table)}") from None
