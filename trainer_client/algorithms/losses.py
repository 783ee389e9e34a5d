"""Policy losses, per token: each returns the loss to minimise at every position and a 0/1 tensor
saying where the clip was active. Masking and averaging are :mod:`aggregation`'s job, so one loss
works with every aggregation and with gradient accumulation.

``logp`` is the current policy's log-prob of each sampled token (with grad), ``old_logp`` the
policy the ratio is taken against (detached). ``advantages`` is per token [B, T].
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["cispo_loss", "gspo_loss", "ppo_clip_loss"]


def ppo_clip_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    dual_clip: float | None = None,
) -> tuple[Tensor, Tensor]:
    """PPO-clip with decoupled bounds (DAPO's clip-higher) and optional dual clip.

    L_t = -min(r_t A_t, clip(r_t, 1 - eps_low, 1 + eps_high) A_t), r_t = pi(y_t) / pi_old(y_t).
    Schulman et al. 2017 (arXiv:1707.06347); clip-higher from Yu et al. 2025, "DAPO"
    (arXiv:2503.14476), which raises eps_high so low-probability tokens can still grow. Dual clip
    (Ye et al. 2020, arXiv:1912.09729) bounds the loss by -c A_t when A_t < 0.
    logp, old_logp, advantages: [B, T] -> (loss [B, T], clipped [B, T])
    """
    ratio = torch.exp((logp - old_logp).clamp(-20.0, 20.0))  # [B, T]
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    was_clipped = (clipped > unclipped).to(logp.dtype)
    if dual_clip is not None:
        bound = -advantages * dual_clip  # only binds where A < 0
        loss = torch.where(advantages < 0, torch.minimum(loss, bound), loss)
    return loss, was_clipped


def gspo_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    clip_low: float = 3e-4,
    clip_high: float = 4e-4,
) -> tuple[Tensor, Tensor]:
    """GSPO: one importance ratio per sequence, the geometric mean of its token ratios.

    Zheng et al. 2025, "Group Sequence Policy Optimization" (arXiv:2507.18071), the GSPO-token
    form: s_i = exp(mean_t log(pi/pi_old)), s_{i,t} = sg[s_i] * pi(y_t) / sg[pi(y_t)], and
    L_{i,t} = -min(s_{i,t} A_{i,t}, clip(s_{i,t}, 1 - eps_low, 1 + eps_high) A_{i,t}). With
    sequence-level advantages its gradient is GSPO's. The bounds are tiny (3e-4, 4e-4 in the
    paper) because a geometric mean moves far less than a token ratio.
    logp, old_logp, advantages, mask: [B, T] -> (loss [B, T], clipped [B, T])
    """
    m = mask.to(logp.dtype)
    log_ratio = (logp - old_logp) * m  # [B, T]
    seq_log_ratio = log_ratio.sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1.0)  # [B, 1]
    token_log_ratio = seq_log_ratio.detach() + logp - logp.detach()  # value s_i, gradient of log pi(y_t)
    ratio = torch.exp(token_log_ratio.clamp(-20.0, 20.0))  # [B, T]
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    return torch.maximum(unclipped, clipped), (clipped > unclipped).to(logp.dtype)


def cispo_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    clip_low: float | None = None,
    clip_high: float = 0.28,
) -> tuple[Tensor, Tensor]:
    """CISPO: clip the importance weight, not the update, so every token keeps its gradient.

    MiniMax 2025, "MiniMax-M1" (arXiv:2506.13585), eq. 4:
    L_t = -sg[clip(r_t, 1 - eps_low, 1 + eps_high)] * A_t * log pi(y_t). PPO drops the gradient of
    clipped tokens (often the rare "reflective" ones); CISPO only caps their weight. The paper sets
    no lower bound (``clip_low=None``).
    logp, old_logp, advantages: [B, T] -> (loss [B, T], clipped [B, T])
    """
    ratio = torch.exp((logp - old_logp).detach().clamp(-20.0, 20.0))  # [B, T]
    low = 0.0 if clip_low is None else 1.0 - clip_low
    weight = ratio.clamp(low, 1.0 + clip_high)
    was_clipped = (weight != ratio).to(logp.dtype)
    return -weight * advantages * logp, was_clipped
