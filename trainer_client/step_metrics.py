"""The metric rows of one step, computed from what was generated and what the update saw.

Every name here is documented in :data:`rewardhub.trainer.metrics.METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from .algorithms import zero_variance_groups
from .algorithms.tables import advantage_estimator
from .config import TrainConfig
from .generated import Generated, StepBatch
from .objective import LossStats, dense_token_rewards
from .rewards import RewardBatch
from .rollout import Rollout
from .timing import StepTiming
from .update import UpdateResult

__all__ = [
    "actor_metrics",
    "dense_metrics",
    "group_metrics",
    "ok_mean",
    "response_metrics",
    "reward_by_verifier",
    "reward_metrics",
    "step_row",
]


def step_row(cfg: TrainConfig, step: int, batch: StepBatch, update: UpdateResult, timing: StepTiming) -> dict[str, Any]:
    """The step's row of ``metrics.jsonl``: rewards and groups of everything generated, the update, speed."""
    G = cfg.rollout.group_size
    everything = batch.generated
    row: dict[str, Any] = {"step": step}
    row.update(reward_metrics(everything))
    row.update(group_metrics(everything, G, batch.rounds, kept=batch.kept.rollout.size // G))
    row.update(actor_metrics(update.stats, update.grad_norms, update.lr, cfg.algorithm.mismatch.tis_cap is not None))
    row.update(response_metrics(everything.rollout))
    if advantage_estimator(cfg.algorithm.advantage).dense_rewards:
        row.update(dense_metrics(everything))
    if cfg.reward.dense is not None:
        row["time/publish_s"] = timing.publish
    tokens = int(everything.rollout.lengths.sum())
    row.update(
        {
            "perf/tokens_per_s": tokens / timing.step,
            "perf/samples_per_s": everything.rollout.size / timing.step,
            "time/generate_s": timing.generate,
            "time/reward_s": timing.reward,
            "time/train_s": timing.train,
            "time/step_s": timing.step,
            "reward/latency_s": timing.latency,
        }
    )
    return row


def ok_mean(scores: Tensor, valid: Tensor) -> float:
    return float(scores[valid].mean()) if valid.any() else 0.0


def reward_by_verifier(rewards: RewardBatch) -> dict[str, float]:
    out = {}
    for label in sorted(set(rewards.labels)):
        mask = torch.tensor([lab == label for lab in rewards.labels]) & rewards.valid
        out[label] = ok_mean(rewards.scores, mask)
    return out


def reward_metrics(gen: Generated) -> dict[str, float]:
    """The service's rewards of ``gen``, and the same rewards as the advantages saw them."""
    r = gen.rewards
    shaped, in_loss = gen.shaped.rewards, gen.shaped.in_loss
    ok = r.scores[r.valid]
    statuses = list(r.statuses)
    n = max(len(statuses), 1)
    out = {
        "reward/mean": float(ok.mean()) if ok.numel() else 0.0,
        "reward/std": float(ok.std(unbiased=False)) if ok.numel() else 0.0,
        "reward/max": float(ok.max()) if ok.numel() else 0.0,
        "reward/min": float(ok.min()) if ok.numel() else 0.0,
        "reward/ok_frac": statuses.count("ok") / n,
        "reward/error_frac": statuses.count("error") / n,
        "reward/timeout_frac": statuses.count("timeout") / n,
        "reward/masked_frac": 1.0 - float(in_loss.float().mean()) if statuses else 0.0,
        "reward/shaped_mean": ok_mean(shaped, in_loss),
        "reward/overlong_penalty": float(gen.shaped.overlong.mean()),
    }
    if gen.greedy is not None:
        out["reward/greedy_mean"] = ok_mean(gen.greedy.rewards, gen.greedy.in_loss)
    for label, mean in reward_by_verifier(r).items():
        out[f"reward/verifier/{label}/mean"] = mean
        out[f"reward/verifier/{label}/count"] = float(sum(lab == label for lab in r.labels))
    return out


def dense_metrics(gen: Generated) -> dict[str, float]:
    """The dense (per-token) rewards of the judged samples, as the service returned them (PRIME)."""
    r = gen.rewards
    rows = [i for i, ok in enumerate(r.valid.tolist()) if ok and r.steps[i]]
    values = torch.tensor([v for i in rows for v in r.steps[i]], dtype=torch.float32)  # type: ignore[union-attr]
    sums = torch.tensor([sum(r.steps[i]) for i in rows], dtype=torch.float32)  # type: ignore[arg-type]
    judged = max(int(r.valid.sum()), 1)
    ro = gen.rollout
    _, misaligned = dense_token_rewards(tuple(r.steps[i] for i in rows), ro.response_mask[rows], ~ro.truncated[rows])
    empty = values.numel() == 0
    return {
        "reward/dense_frac": len(rows) / judged,
        "reward/dense_token_mean": 0.0 if empty else float(values.mean()),
        "reward/dense_token_abs_mean": 0.0 if empty else float(values.abs().mean()),
        "reward/dense_token_min": 0.0 if empty else float(values.min()),
        "reward/dense_token_max": 0.0 if empty else float(values.max()),
        "reward/dense_sum_mean": 0.0 if empty else float(sums.mean()),
        "reward/dense_sum_std": 0.0 if empty else float(sums.std(unbiased=False)),
        "reward/dense_misaligned_frac": misaligned / max(len(rows), 1),
    }


def group_metrics(gen: Generated, group_size: int, rounds: int, kept: int) -> dict[str, float]:
    scores = gen.rewards.scores.view(-1, group_size)
    valid = gen.rewards.valid.view(-1, group_size)
    flat = zero_variance_groups(scores, valid)
    top = scores[valid].max() if valid.any() else torch.tensor(1.0)
    solved = ((scores >= top) | ~valid).all(-1) & valid.any(-1) & (top > 0)
    return {
        "groups/zero_variance_frac": float(flat.float().mean()),
        "groups/solved_frac": float(solved.float().mean()),
        "groups/kept": float(kept),
        "groups/generated": float(scores.shape[0]),
        "groups/rounds": float(rounds),
    }


def actor_metrics(stats: LossStats, grad_norms: Sequence[float], lr: float, tis: bool) -> dict[str, float]:
    s = stats.sums
    tokens = max(s.get("tokens", 0.0), 1.0)
    updates = max(len(grad_norms), 1)
    adv_mean = s.get("advantage", 0.0) / tokens
    return {
        "actor/loss": s.get("loss", 0.0) / updates,
        "actor/pg_loss": s.get("pg_loss", 0.0) / updates,
        "actor/entropy_loss": s.get("entropy_loss", 0.0) / updates,
        "actor/kl_loss": s.get("kl_loss", 0.0) / updates,
        "actor/entropy": s.get("entropy", 0.0) / tokens,
        "actor/ppo_kl": s.get("ppo_kl", 0.0) / tokens,
        "actor/clipfrac": s.get("clipfrac", 0.0) / tokens,
        "actor/ref_kl": s.get("ref_kl", 0.0) / tokens,
        "actor/grad_norm": sum(grad_norms) / updates,
        "actor/lr": lr,
        "actor/advantage_mean": adv_mean,
        "actor/advantage_std": math.sqrt(max(s.get("advantage_sq", 0.0) / tokens - adv_mean**2, 0.0)),
        "rollout/mismatch_kl": s.get("mismatch_kl", 0.0) / tokens,
        "rollout/is_ratio_mean": s.get("is_ratio", 0.0) / tokens,
        "rollout/is_ratio_max": stats.maxima.get("is_ratio", 1.0),
        "rollout/is_ratio_min": stats.minima.get("is_ratio", 1.0),
        "rollout/log_ratio_mean": s.get("log_ratio", 0.0) / tokens,
        "rollout/log_ratio_abs_mean": s.get("abs_log_ratio", 0.0) / tokens,
        "rollout/log_ratio_abs_max": stats.maxima.get("abs_log_ratio", 0.0),
        "rollout/tis_weight_mean": s.get("tis_weight", 0.0) / tokens if tis else 1.0,
        "rollout/tis_weight_max": stats.maxima.get("tis_weight", 1.0) if tis else 1.0,
        "rollout/tis_weight_min": stats.minima.get("tis_weight", 1.0) if tis else 1.0,
        "rollout/tis_truncated_frac": s.get("tis_truncated", 0.0) / tokens if tis else 0.0,
        "rollout/token_masked_frac": s.get("masked_tokens", 0.0) / tokens,
        "rollout/seq_filtered_frac": s.get("filtered_sequences", 0.0) / max(s.get("sequences", 0.0), 1.0),
    }


def response_metrics(rollout: Rollout) -> dict[str, float]:
    lengths = rollout.lengths.float()
    return {
        "response/length_mean": float(lengths.mean()) if lengths.numel() else 0.0,
        "response/length_max": float(lengths.max()) if lengths.numel() else 0.0,
        "response/clip_frac": float(rollout.truncated.float().mean()) if lengths.numel() else 0.0,
    }
