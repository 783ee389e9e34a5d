"""The configured objective: which pure functions of ``algorithms`` apply, and in what order.

This is the only place where the configuration meets the mathematics. :func:`compute_advantages`
turns a step's rewards into per-token advantages; :func:`micro_batch_loss` turns one
micro-batch's fresh log-probs into its share of the loss plus the statistics the metrics table
promises. Both stay free of models and optimizers so they can be tested on hand-made tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from rewardhub.trainer.algorithms import (
    Normaliser,
    aggregate,
    broadcast_to_tokens,
    cispo_loss,
    dr_grpo_advantages,
    entropy_bonus,
    grpo_advantages,
    gspo_loss,
    kl_k3,
    kl_penalty,
    ppo_clip_loss,
    prime_advantages,
    reinforce_pp_advantages,
    reinforce_pp_baseline_advantages,
    rloo_advantages,
    sequence_filter,
    terminal_token_rewards,
    tis_weights,
    token_mask,
)
from rewardhub.trainer.config import AlgorithmConfig
from torch import Tensor

__all__ = ["LossStats", "MicroBatch", "compute_advantages", "dense_token_rewards", "micro_batch_loss"]


def dense_token_rewards(steps: tuple[list[float] | None, ...], mask: Tensor) -> tuple[Tensor, int]:
    """Per-token rewards from ``Result.steps`` (PRIME): one value per response token when the
    lengths agree, else step k's value on the token at fraction (k+1)/K of the response.

    Returns ([B, T] rewards, how many samples needed the spreading).
    """
    out = torch.zeros(mask.shape, dtype=torch.float32)
    lengths = mask.long().sum(-1).tolist()
    misaligned = 0
    for i, (values, length) in enumerate(zip(steps, lengths, strict=True)):
        if not values or length == 0:
            continue
        if len(values) == length:
            out[i, :length] = torch.tensor(values, dtype=torch.float32)
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
    dense: Tensor | None = None,  # [B, T]: PRIME's per-token rewards
) -> Tensor:
    """Per-token advantages [B, T], 0 outside ``mask``."""
    penalty = token_penalty if token_penalty is not None else torch.zeros(mask.shape)
    if cfg.advantage in {"grpo", "dr_grpo", "rloo"}:
        # outcome estimators see the KL penalty as part of the sequence's reward
        seq_rewards = rewards + (penalty * mask).sum(-1).view_as(rewards)
        estimator = {
            "grpo": lambda r, v: grpo_advantages(r, v, cfg.std_eps),
            "dr_grpo": dr_grpo_advantages,
            "rloo": rloo_advantages,
        }
        return broadcast_to_tokens(estimator[cfg.advantage](seq_rewards, valid), mask)
    if cfg.advantage == "reinforce_pp":
        token_rewards = terminal_token_rewards(rewards.reshape(-1), mask) + penalty
        return reinforce_pp_advantages(token_rewards, mask, cfg.gamma)
    if cfg.advantage == "reinforce_pp_baseline":
        return reinforce_pp_baseline_advantages(rewards, valid, penalty, mask, cfg.gamma)
    if cfg.advantage == "prime":
        dense_rewards = (dense if dense is not None else torch.zeros(mask.shape)) + penalty
        return prime_advantages(rewards, valid, dense_rewards, mask, dense_coef=cfg.prime_dense_coef)
    raise ValueError(f"unknown advantage estimator {cfg.advantage!r}")


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


def _policy_loss(
    cfg: AlgorithmConfig, logp: Tensor, anchor: Tensor, adv: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor]:
    if cfg.policy_loss == "ppo_clip":
        return ppo_clip_loss(logp, anchor, adv, cfg.clip_low, cfg.clip_high, cfg.dual_clip)
    if cfg.policy_loss == "gspo":
        return gspo_loss(logp, anchor, adv, mask, cfg.gspo_clip_low, cfg.gspo_clip_high)
    if cfg.policy_loss == "cispo":
        return cispo_loss(logp, anchor, adv, None, cfg.clip_high)
    raise ValueError(f"unknown policy loss {cfg.policy_loss!r}")


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

    pg, clipped = _policy_loss(cfg, logp, anchor, batch.advantages, mask)
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
        log_ratio = (trainer_old - batch.rollout_logp).clamp(-20, 20)
        ratio = torch.exp(log_ratio)
        stats.add("mismatch_kl", ((torch.expm1(log_ratio) - log_ratio) * r).sum().item())  # k3, as in mismatch_kl
        stats.add("is_ratio", (ratio * r).sum().item())
        if response.any():
            stats.extreme("is_ratio", ratio[response].max().item(), ratio[response].min().item())
        if cfg.mismatch.tis_cap is not None:
            stats.add("tis_truncated", ((ratio > cfg.mismatch.tis_cap).float() * r).sum().item())
        if batch.ref_logp is not None:
            stats.add("ref_kl", (kl_k3(logp.detach(), batch.ref_logp) * r).sum().item())
        stats.add("advantage", (batch.advantages * r).sum().item())
        stats.add("advantage_sq", (batch.advantages**2 * r).sum().item())
    return stats
