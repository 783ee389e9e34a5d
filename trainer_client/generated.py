"""One round of generation and scoring, kept together so it can be filtered and stacked.

Dynamic sampling drops whole groups and refills from further rounds; everything about a sample
(its tokens, behaviour log-probs, judgement, reference log-probs) has to move with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .data import PromptRecord
from .rewards import RewardBatch
from .rollout import Rollout, concat_rollouts

__all__ = ["Generated", "merge_generated"]


@dataclass(frozen=True)
class Generated:
    """One round of generation and scoring: ``len(records) * G`` samples, grouped by prompt."""

    records: tuple[PromptRecord, ...]
    rollout: Rollout
    rewards: RewardBatch
    groups: tuple[str, ...]
    ref_logp: Tensor | None  # [B, T]
    old_logp: Tensor | None  # [B, T]

    def select_groups(self, keep: Tensor, group_size: int) -> Generated:
        """The groups where ``keep`` [P] is true."""
        rows = [p * group_size + g for p in torch.nonzero(keep).flatten().tolist() for g in range(group_size)]
        idx = torch.as_tensor(rows, dtype=torch.long)
        r = self.rewards
        return Generated(
            records=tuple(rec for rec, k in zip(self.records, keep.tolist(), strict=True) if k),
            rollout=self.rollout.select(idx),
            rewards=RewardBatch(
                scores=r.scores[idx],
                valid=r.valid[idx],
                statuses=tuple(r.statuses[i] for i in rows),
                errors=tuple(r.errors[i] for i in rows),
                details=tuple(r.details[i] for i in rows),
                steps=tuple(r.steps[i] for i in rows),
                labels=tuple(r.labels[i] for i in rows),
            ),
            groups=tuple(self.groups[i] for i in rows),
            ref_logp=None if self.ref_logp is None else self.ref_logp[idx],
            old_logp=None if self.old_logp is None else self.old_logp[idx],
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
        rewards=RewardBatch(
            scores=torch.cat([p.rewards.scores for p in parts]),
            valid=torch.cat([p.rewards.valid for p in parts]),
            statuses=tuple(s for p in parts for s in p.rewards.statuses),
            errors=tuple(s for p in parts for s in p.rewards.errors),
            details=tuple(s for p in parts for s in p.rewards.details),
            steps=tuple(s for p in parts for s in p.rewards.steps),
            labels=tuple(s for p in parts for s in p.rewards.labels),
        ),
        groups=tuple(g for p in parts for g in p.groups),
        ref_logp=cat([p.ref_logp for p in parts]),
        old_logp=cat([p.old_logp for p in parts]),
    )
