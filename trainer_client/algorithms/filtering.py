"""DAPO's data shaping: drop groups that teach nothing, and soften the penalty for long answers.

Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System at Scale"
(arXiv:2503.14476), sections 3.2 (dynamic sampling) and 3.4 (overlong reward shaping).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["informative_groups", "overlong_penalty", "zero_variance_groups"]


def zero_variance_groups(rewards: Tensor, valid: Tensor, atol: float = 1e-6) -> Tensor:
    """Groups whose valid rewards are all equal (or that have fewer than two valid samples).

    Their group-relative advantages are all 0, so they only dilute the batch.
    rewards, valid: [P, G] -> [P] bool
    """
    big = torch.finfo(rewards.dtype).max
    high = torch.where(valid, rewards, torch.full_like(rewards, -big)).max(-1).values  # [P]
    low = torch.where(valid, rewards, torch.full_like(rewards, big)).min(-1).values  # [P]
    return (valid.sum(-1) < 2) | ((high - low) <= atol)


def informative_groups(rewards: Tensor, valid: Tensor) -> Tensor:
    """Dynamic sampling's keep mask: 0 < accuracy < 1 in DAPO's words.  [P, G] -> [P] bool"""
    return ~zero_variance_groups(rewards, valid)


def overlong_penalty(lengths: Tensor, max_length: int, buffer: int, factor: float = 1.0) -> Tensor:
    """DAPO's soft overlong punishment, added to the reward.

        R(y) = 0                                      if |y| <= L_max - L_cache
               ((L_max - L_cache) - |y|) / L_cache    if L_max - L_cache < |y| <= L_max
               -1                                     if |y| > L_max

    scaled by ``factor``; ``buffer`` is L_cache. A response that reaches the generation budget
    without finishing has |y| = L_max and so gets the full -factor.
    lengths: [B] (tokens) -> [B]
    """
    if not 0 < buffer <= max_length:
        raise ValueError(f"overlong buffer must be in (0, max_length={max_length}], got {buffer}")
    expected = max_length - buffer
    excess = (lengths.float() - expected).clamp(min=0.0)
    return -factor * (excess / buffer).clamp(max=1.0)
