"""Rewards as the advantages see them: the service's scores, DAPO's overlong shaping, and the mask.

A sample the service could not judge (status not ``ok``) leaves the loss and its reward becomes
0 here only so that it cannot leak into a statistic; with ``reward.mask_truncated`` a response cut
by the generation budget leaves the loss too.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .algorithms import overlong_penalty
from .config import TrainConfig
from .generated import Generated

__all__ = ["overlong_mean", "shaped_rewards"]


def shaped_rewards(gen: Generated, cfg: TrainConfig) -> tuple[Tensor, Tensor]:
    """(rewards [B] as the advantages see them, which samples enter the loss [B] bool)."""
    rc = cfg.reward
    scores = gen.rewards.scores.clone()
    valid = gen.rewards.valid.clone()
    if rc.overlong is not None:
        scores = scores + overlong_penalty(
            gen.rollout.lengths, cfg.rollout.max_new_tokens, rc.overlong.buffer, rc.overlong.factor
        )
    if rc.mask_truncated:
        valid &= ~gen.rollout.truncated
    return torch.where(valid, scores, torch.zeros_like(scores)), valid


def overlong_mean(gen: Generated, cfg: TrainConfig) -> float:
    """The mean overlong penalty of the round (``reward/overlong_penalty``); 0 without the shaping."""
    rc = cfg.reward
    if rc.overlong is None:
        return 0.0
    return float(
        overlong_penalty(gen.rollout.lengths, cfg.rollout.max_new_tokens, rc.overlong.buffer, rc.overlong.factor).mean()
    )
