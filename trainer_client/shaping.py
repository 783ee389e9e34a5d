"""Rewards as the advantages see them: the service's scores, DAPO's overlong shaping, and the mask.

A sample the service could not judge (status not ``ok``) leaves the loss and its reward becomes
0 here only so that it cannot leak into a statistic; with ``reward.mask_truncated`` a response cut
by the generation budget leaves the loss too. The step shapes each round once, when its
judgements arrive (:func:`rewardhub.trainer.step.judge`); dynamic sampling, the advantages, the
dumps and the metrics all read that one :class:`Shaped`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .algorithms import overlong_penalty
from .config import TrainConfig
from .rewards import RewardBatch
from .rollout import Rollout

__all__ = ["Shaped", "shape_rewards"]


@dataclass(frozen=True)
class Shaped:
    """The shaped rewards of a batch of samples, one value per sample."""

    rewards: Tensor  # [B] as the advantages see them (0 outside the loss)
    in_loss: Tensor  # [B] bool: the samples that enter the loss
    overlong: Tensor  # [B] the overlong penalty added (0 without the shaping)

    def select(self, index: Tensor) -> Shaped:
        return Shaped(self.rewards[index], self.in_loss[index], self.overlong[index])

    @staticmethod
    def concat(parts: Sequence[Shaped]) -> Shaped:
        return Shaped(
            torch.cat([p.rewards for p in parts]),
            torch.cat([p.in_loss for p in parts]),
            torch.cat([p.overlong for p in parts]),
        )


def shape_rewards(rollout: Rollout, rewards: RewardBatch, cfg: TrainConfig) -> Shaped:
    """The service's judgement of ``rollout`` as the advantages will see it."""
    rc = cfg.reward
    scores = rewards.scores.clone()
    in_loss = rewards.valid.clone()
    overlong = torch.zeros_like(scores)
    if rc.overlong is not None:
        overlong = overlong_penalty(rollout.lengths, cfg.rollout.max_new_tokens, rc.overlong.buffer, rc.overlong.factor)
        scores = scores + overlong
    if rc.mask_truncated:
        in_loss &= ~rollout.truncated
    return Shaped(torch.where(in_loss, scores, torch.zeros_like(scores)), in_loss, overlong)
