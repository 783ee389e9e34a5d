"""The policy's entropy per token, and the bonus that keeps exploration alive.

A small bonus -c * H(pi(. | context)) on every response token is the cheapest guard against
entropy collapse: on sparse tasks (see examples/toy_addition.yaml) a policy without it locks onto
its most common first token before the rare successes can teach it anything (the collapse
documented by Yu et al. 2025, "DAPO", arXiv:2503.14476, and Cui et al. 2025, "The Entropy
Mechanism of RL for Reasoning LMs", arXiv:2505.22617).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["entropy_bonus", "entropy_from_logits"]


def entropy_from_logits(logits: Tensor) -> Tensor:
    """H = logsumexp(z) - sum_v softmax(z)_v z_v, in float32.  [B, T, V] -> [B, T]"""
    z = logits.float()
    log_norm = torch.logsumexp(z, dim=-1)  # [B, T]
    return log_norm - (torch.softmax(z, dim=-1) * z).sum(-1)


def entropy_bonus(entropy: Tensor, coef: float) -> Tensor:
    """The per-token loss term -c * H; minimising it raises the entropy.  [B, T] -> [B, T]"""
    return -coef * entropy
