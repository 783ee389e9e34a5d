"""The configured objective: which pure functions of ``algorithms`` apply, and in what order.

Here the configuration meets the mathematics: the estimator and the policy loss come from the
tables of :mod:`rewardhub.trainer.algorithms.tables`, the corrections and the aggregation from
their switches. :func:`compute_advantages` turns a step's rewards into per-token advantages;
:func:`micro_batch_loss` turns one micro-batch's fresh log-probs into its share of the loss plus
the statistics the metrics table promises. Both stay free of models and optimizers so they can be
tested on hand-made tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from .algorithms import (
    Normaliser,
    aggregate,
    entropy_bonus,
    kl_k3,
    kl_penalty,
    mismatch_sums,
    sequence_filter,
    tis_weights,
    token_mask,
)
from .algorithms.tables import AdvantageInputs, advantage_estimator, policy_loss
from .config import AlgorithmConfig

__all__ = ["LossStats", "MicroBatch", "compute_advantages", "dense_token_rewards", "micro_batch_loss"]


def dense_token_rewards(
    steps: tuple[list[float] | None, ...], mask: Tensor, ended: Tensor | None = None
) -> tuple[Tensor, int]:
    """Per-token rewards from ``Result.steps`` (PRIME): one value per response token when the
    lengths agree, else step k's value on the token at fraction (k+1)/K of the response.

    ``ended`` [B] bool marks responses that stopped on their end-of-sequence token (not cut by the
    budget): that token is in ``mask`` but not in the text the service scored, so a verifier that
    rewards each token of the text (``implicit_prm``) returns one value fewer. Those values belong
    to the tokens before it, in order, and the end token gets 0; spread over all the tokens instead,
    every value from the middle on would land one token late.

    Returns ([B, T] rewards, how many samples needed the spreading).
    """
    out = torch.zeros(mask.shape, dtype=torch.float32)
    lengths = mask.long().sum(-1).tolist()
    stopped = [False] * len(lengths) if ended is None else ended.tolist()
    misaligned = 0
    for i, (values, length) in enumerate(zip(steps, lengths, strict=True)):
        if not values or length == 0:
            continue
        if len(values) == length or (stopped[i] and len(values) == length - 1):
            out[i, : len(values)] = torch.tensor(values, dtype=torch.float32)
            continue
        misaligned += 1
        count = len(values)
        for k, value in enumerate(values):
            out[i, max(0, round((k + 1) * length / count) - 1)] += float(value)
    return out, misaligned


def compute_advantages(
    cfg: AlgorithmConfig,
    rewards: Tensor,  # [P, G] shaped outcome rewards
    valid: Tensor,  # [P, G] bool: samples that enter the loss
    mask: Tensor,  # [B, T] bool: response tokens of valid samples, B = P * G
    token_penalty: Tensor | None = None,  # [B, T]: -beta * KL per token (KL in the reward), else None
    dense: Tensor | None = None,  # [B, T]: per-token rewards (PRIME), else None
    greedy: Tensor | None = None,  # [P]: shaped rewards of the prompts' greedy responses (ReMax), else None
    greedy_valid: Tensor | None = None,  # [P] bool: which of them were judged
) -> Tensor:
    """Per-token advantages [B, T], 0 outside ``mask``, from the estimator ``cfg.advantage`` names."""
    estimator = advantage_estimator(cfg.advantage)
    inputs = AdvantageInputs(
        rewards=rewards,
        valid=valid,
        mask=mask,
        token_penalty=token_penalty if token_penalty is not None else torch.zeros(mask.shape),
        dense=dense if dense is not None else torch.zeros(mask.shape),
        greedy=greedy,
        greedy_valid=greedy_valid,
    )
    return estimator.compute(inputs, cfg)


@dataclass(frozen=True)
class MicroBatch:
    """What the loss needs besides the fresh log-probs, for the rows of one micro-batch."""

    loss_mask: Tensor  # [b, T] bool: response tokens of samples that enter the loss
    advantages: Tensor  # [b, T]
    rollout_logp: Tensor  # [b, T] behaviour policy (the engine's log-probs)
    old_logp: Tensor | None  # [b, T] trainer log-probs before the update; None: on-policy, use the fresh ones
    ref_logp: Tensor | None  # [b, T] reference policy, when one is kept


@dataclass
class LossStats:
    """Sums over tokens (and sequences) so micro-batches combine exactly; ``means`` divides."""

    sums: dict[str, float] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)
    minima: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        self.sums[key] = self.sums.get(key, 0.0) + value

    def extreme(self, key: str, high: float, low: float) -> None:
        self.maxima[key] = max(self.maxima.get(key, high), high)
        self.minima[key] = min(self.minima.get(key, low), low)

    def merge(self, other: LossStats) -> None:
        for key, value in other.sums.items():
            self.add(key, value)
        for key in other.maxima:
            self.extreme(key, other.maxima[key], other.minima[key])


def micro_batch_loss(
    cfg: AlgorithmConfig, logp: Tensor, entropy: Tensor, batch: MicroBatch, norm: Normaliser
) -> tuple[Tensor, LossStats]:
    """This micro-batch's share of the loss, and its statistics.  logp, entropy: [b, T] (with grad)

    The trainer's pre-update log-probs (``old_logp``, or the fresh ones detached when on-policy)
    are compared with the engine's to measure and correct the mismatch; the PPO ratio is taken
    against them, or against the engine's when ``old_logprobs: rollout``.
    """
    trainer_old = batch.old_logp if batch.old_logp is not None else logp.detach()
    anchor = batch.rollout_logp if cfg.old_logprobs == "rollout" else trainer_old
    response = batch.loss_mask
    mask = response.clone()
    mm = cfg.mismatch
    if mm.token_mask is not None:
        mask &= token_mask(trainer_old, batch.rollout_logp, *mm.token_mask)
    if mm.sequence_filter is not None:
        mask &= sequence_filter(trainer_old, batch.rollout_logp, response, *mm.sequence_filter).unsqueeze(-1)
    weights = (
        tis_weights(trainer_old, batch.rollout_logp, mm.tis_cap) if mm.tis_cap is not None else torch.ones_like(logp)
    )

    pg, clipped = policy_loss(cfg.policy_loss)(logp, anchor, batch.advantages, mask, cfg)
    pg_part = aggregate(pg * weights, mask, norm)
    entropy_part = aggregate(entropy_bonus(entropy, cfg.entropy_coef), mask, norm)
    loss = pg_part + entropy_part
    kl_part = torch.zeros(())
    if batch.ref_logp is not None and cfg.kl.where == "loss" and cfg.kl.coef > 0:
        kl_part = aggregate(cfg.kl.coef * kl_penalty(logp, batch.ref_logp, cfg.kl.estimator), mask, norm)
        loss = loss + kl_part
    parts = {"loss": loss, "pg_loss": pg_part, "entropy_loss": entropy_part, "kl_loss": kl_part}
    return loss, _stats(cfg, logp, entropy, batch, trainer_old, anchor, mask, clipped, parts)


def _stats(
    cfg: AlgorithmConfig,
    logp: Tensor,
    entropy: Tensor,
    batch: MicroBatch,
    trainer_old: Tensor,
    anchor: Tensor,
    mask: Tensor,
    clipped: Tensor,
    parts: dict[str, Tensor],
) -> LossStats:
    stats = LossStats()
    response = batch.loss_mask
    with torch.no_grad():
        r = response.float()
        m = mask.float()
        stats.add("tokens", r.sum().item())
        stats.add("sequences", float(response.any(-1).sum().item()))
        for key, value in parts.items():
            stats.add(key, value.item())
        stats.add("entropy", (entropy.detach() * r).sum().item())
        stats.add("ppo_kl", ((anchor - logp.detach()) * r).sum().item())
        stats.add("clipfrac", (clipped * m).sum().item())
        stats.add("masked_tokens", (r - m).sum().item())
        stats.add("filtered_sequences", float((response.any(-1) & ~mask.any(-1)).sum().item()))
        ratio = torch.exp((trainer_old - batch.rollout_logp).clamp(-20, 20))
        stats.add("is_ratio", (ratio * r).sum().item())
        if response.any():
            stats.extreme("is_ratio", ratio[response].max().item(), ratio[response].min().item())
        gap = mismatch_sums(trainer_old, batch.rollout_logp, response, cfg.mismatch.tis_cap)
        stats.add("mismatch_kl", gap["k3"].item())
        stats.add("log_ratio", gap["log_ratio"].item())
        stats.add("abs_log_ratio", gap["abs_log_ratio"].item())
        stats.add("tis_weight", gap["tis_weight"].item())
        stats.add("tis_truncated", gap["tis_truncated"].item())
        if response.any():
            stats.extreme("abs_log_ratio", gap["abs_log_ratio_max"].item(), 0.0)
            stats.extreme("tis_weight", gap["tis_weight_max"].item(), gap["tis_weight_min"].item())
        if batch.ref_logp is not None:
            stats.add("ref_kl", (kl_k3(logp.detach(), batch.ref_logp) * r).sum().item())
        stats.add("advantage", (batch.advantages * r).sum().item())
        stats.add("advantage_sq", (batch.advantages**2 * r).sum().item())
    return stats
