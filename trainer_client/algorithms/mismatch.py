"""Train-inference mismatch: the rollout engine's probabilities are not the trainer's.

vLLM (or any inference kernel, or a stale weight copy) samples from pi_rollout while the trainer
differentiates pi_train; the two disagree by more than round-off on long sequences and MoE
routers. The samples are off-policy, so the gradient needs correcting with r_t = pi_train(y_t) /
pi_rollout(y_t), where pi_rollout is the engine's own log-prob of the token it sampled:

- truncated importance sampling (Yao et al. 2025, "Your Efficient RL Framework Secretly Brings
  You Off-Policy RL Training"): weight each token's loss by min(r_t, C);
- token masking (IcePop, Ling team 2025; "MIS" in Liu et al. 2025, "When Speed Kills
  Stability"): drop tokens whose r_t leaves [alpha, beta] instead of re-weighting them;
- sequence filtering: drop whole sequences whose geometric-mean ratio exp(mean_t log r_t)
  leaves [low, high], which catches sequences that drifted everywhere a little.

All of these are detached: they choose and weight samples, they are not differentiated.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "geometric_mean_ratio",
    "mismatch_kl",
    "mismatch_sums",
    "sequence_filter",
    "tis_weights",
    "token_mask",
]


def _log_ratio(train_logp: Tensor, rollout_logp: Tensor) -> Tensor:
    return (train_logp.detach() - rollout_logp).clamp(-20.0, 20.0)


def tis_weights(train_logp: Tensor, rollout_logp: Tensor, cap: float) -> Tensor:
    """w_t = min(pi_train(y_t) / pi_rollout(y_t), C).  [B, T], [B, T] -> [B, T]"""
    return torch.exp(_log_ratio(train_logp, rollout_logp)).clamp(max=cap)


def token_mask(train_logp: Tensor, rollout_logp: Tensor, low: float, high: float) -> Tensor:
    """1 where alpha <= r_t <= beta, else 0 (IcePop/MIS).  [B, T], [B, T] -> [B, T] bool"""
    ratio = torch.exp(_log_ratio(train_logp, rollout_logp))
    return (ratio >= low) & (ratio <= high)


def geometric_mean_ratio(train_logp: Tensor, rollout_logp: Tensor, mask: Tensor) -> Tensor:
    """exp(mean_t log r_t) over each sequence's tokens.  [B, T], [B, T], [B, T] -> [B]"""
    m = mask.to(train_logp.dtype)
    mean_log = (_log_ratio(train_logp, rollout_logp) * m).sum(-1) / m.sum(-1).clamp(min=1.0)
    return torch.exp(mean_log)


def sequence_filter(train_logp: Tensor, rollout_logp: Tensor, mask: Tensor, low: float, high: float) -> Tensor:
    """Keep sequences whose geometric-mean ratio lies in [low, high].  -> [B] bool"""
    ratio = geometric_mean_ratio(train_logp, rollout_logp, mask)
    return (ratio >= low) & (ratio <= high)


def mismatch_kl(train_logp: Tensor, rollout_logp: Tensor, mask: Tensor) -> Tensor:
    """KL(pi_rollout || pi_train) per token with the k3 estimator, averaged over the mask.

    Samples come from pi_rollout, so with r = pi_train / pi_rollout, k3 = (r - 1) - log r is an
    unbiased, non-negative estimate (Schulman 2020). The number to watch for a drifting engine.
    [B, T] x3 -> scalar
    """
    log_ratio = _log_ratio(train_logp, rollout_logp)
    per_token = torch.expm1(log_ratio) - log_ratio
    m = mask.to(per_token.dtype)
    return (per_token * m).sum() / m.sum().clamp(min=1.0)


def mismatch_sums(train_logp: Tensor, rollout_logp: Tensor, mask: Tensor, cap: float | None) -> dict[str, Tensor]:
    """What the metrics report about the gap on the sampled tokens, as sums and extremes over ``mask``.

    Sums (so micro-batches add up exactly; divide by the token count for means):
    ``log_ratio`` (sum of log r_t: its mean is minus the k1 estimate of KL(pi_rollout || pi_train)),
    ``abs_log_ratio``, ``k3`` (the k3 estimate, as :func:`mismatch_kl`), ``tis_weight`` (sum of
    min(r_t, C), or of r_t without a cap) and ``tis_truncated`` (tokens with r_t > C).
    Extremes over the masked tokens (0 or 1 when there are none): ``abs_log_ratio_max``,
    ``tis_weight_max``, ``tis_weight_min``.  [B, T] x3 -> scalars
    """
    log_ratio = _log_ratio(train_logp, rollout_logp)
    m = mask.to(log_ratio.dtype)
    weights = torch.exp(log_ratio) if cap is None else tis_weights(train_logp, rollout_logp, cap)
    on = mask.bool()
    any_token = bool(on.any())
    return {
        "log_ratio": (log_ratio * m).sum(),
        "abs_log_ratio": (log_ratio.abs() * m).sum(),
        "k3": ((torch.expm1(log_ratio) - log_ratio) * m).sum(),
        "tis_weight": (weights * m).sum(),
        "tis_truncated": ((torch.exp(log_ratio) > cap).to(m.dtype) * m).sum() if cap is not None else m.new_zeros(()),
        "abs_log_ratio_max": log_ratio.abs()[on].max() if any_token else m.new_zeros(()),
        "tis_weight_max": weights[on].max() if any_token else m.new_ones(()),
        "tis_weight_min": weights[on].min() if any_token else m.new_ones(()),
    }
