"""What a step generated, kept together so it can be filtered and stacked, and the step's batch.

Dynamic sampling drops whole groups and refills from further rounds; everything about a sample
(its tokens, behaviour log-probs, judgement, shaped reward, frozen models' log-probs) has to move
with it: that is a :class:`Generated`. A :class:`StepBatch` is the one object a training step
passes from stage to stage (:mod:`rewardhub.trainer.step`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .data import PromptRecord
from .logprobs import TokenStats
from .rewards import RewardBatch
from .rollout import Rollout, concat_rollouts
from .shaping import Shaped

__all__ = ["Generated", "StepBatch", "merge_generated"]


@dataclass(frozen=True)
class Generated:
    """Rounds of generation and scoring: ``len(records) * G`` samples, grouped by prompt."""

    records: tuple[PromptRecord, ...]
    rollout: Rollout
    rewards: RewardBatch  # the service's judgement
    shaped: Shaped  # the same rewards as the advantages see them
    groups: tuple[str, ...]
    ref_logp: Tensor | None  # [B, T] the reference policy's, when one is kept
    old_logp: Tensor | None  # [B, T] the pre-update log-probs, when the update needs them
    greedy: Shaped | None = None  # [P] each prompt's greedy response, shaped, when the estimator needs it (ReMax)

    @property
    def loss_mask(self) -> Tensor:
        """[B, T] bool: the response tokens of the samples that enter the loss."""
        return self.rollout.response_mask & self.shaped.in_loss.unsqueeze(-1)

    def select_groups(self, keep: Tensor, group_size: int) -> Generated:
        """The groups where ``keep`` [P] is true."""
        rows = [p * group_size + g for p in torch.nonzero(keep).flatten().tolist() for g in range(group_size)]
        idx = torch.as_tensor(rows, dtype=torch.long)
        return Generated(
            records=tuple(rec for rec, k in zip(self.records, keep.tolist(), strict=True) if k),
            rollout=self.rollout.select(idx),
            rewards=self.rewards.select(rows),
            shaped=self.shaped.select(idx),
            groups=tuple(self.groups[i] for i in rows),
            ref_logp=None if self.ref_logp is None else self.ref_logp[idx],
            old_logp=None if self.old_logp is None else self.old_logp[idx],
            greedy=None if self.greedy is None else self.greedy.select(torch.nonzero(keep).flatten()),
        )


def merge_generated(parts: Sequence[Generated], pad_id: int) -> Generated:
    """Stack rounds (or kept groups of rounds) into one, re-padding the response columns."""
    if len(parts) == 1:
        return parts[0]
    width = max(p.rollout.response_ids.shape[1] for p in parts)

    def cat(tensors: list[Tensor | None]) -> Tensor | None:
        if any(t is None for t in tensors):
            return None
        return torch.cat([torch.nn.functional.pad(t, (0, width - t.shape[1])) for t in tensors if t is not None])

    return Generated(
        records=tuple(r for p in parts for r in p.records),
        rollout=concat_rollouts([p.rollout for p in parts], pad_id),
        rewards=RewardBatch.concat([p.rewards for p in parts]),
        shaped=Shaped.concat([p.shaped for p in parts]),
        groups=tuple(g for p in parts for g in p.groups),
        ref_logp=cat([p.ref_logp for p in parts]),
        old_logp=cat([p.old_logp for p in parts]),
        greedy=None if any(p.greedy is None for p in parts) else Shaped.concat([p.greedy for p in parts]),  # type: ignore[misc]
    )


@dataclass(frozen=True)
class StepBatch:
    """One step's samples from collection to update; each stage of the step fills its part."""

    generated: Generated  # every sample the step generated: the reward and group metrics describe them
    kept: Generated  # the groups the update trains on (all of ``generated`` without dynamic sampling)
    rounds: int  # generation rounds it took
    prefetched: TokenStats | None = None  # the update's first forward pass, run while the service scored
    advantages: Tensor | None = None  # [B, T] of ``kept``, once computed
