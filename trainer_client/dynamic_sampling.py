"""DAPO dynamic sampling: keep only the groups that teach something, and sample more to fill the batch.

A group whose shaped rewards are all equal has all-zero group-relative advantages: it only
dilutes the batch. With ``algorithm.dynamic_sampling.enabled`` the step generates rounds of P
prompts until P informative groups are kept or ``max_rounds`` rounds are spent (Yu et al. 2025,
"DAPO", arXiv:2503.14476, section 3.2). The reward metrics describe everything generated; the
update sees only what was kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .algorithms import zero_variance_groups
from .data import PromptStream
from .generated import Generated, merge_generated
from .logprobs import TokenStats
from .rounds import Rounds, ScoreQueue
from .shaping import shaped_rewards
from .timing import StepTiming

__all__ = ["Collected", "informative_rounds"]


@dataclass(frozen=True)
class Collected:
    """What one step generated, and what of it the update trains on (they differ only with dynamic sampling)."""

    everything: Generated
    kept: Generated
    rounds: int
    prefetched: TokenStats | None = None
    """The update's first forward pass, when it already ran while the service was scoring."""


def informative_rounds(
    rounds: Rounds, stream: PromptStream, worker: ScoreQueue, step: int, timing: StepTiming
) -> Collected:
    """Rounds of P prompts until P groups with unequal rewards are kept, or ``max_rounds`` are spent.

    Groups are kept in the order they were generated and never more than the batch needs. When
    no group of any round is informative, the last round is trained on (only the entropy term acts).
    """
    cfg = rounds.cfg
    P, G = cfg.rollout.prompts_per_step, cfg.rollout.group_size
    generated: list[Generated] = []
    kept: list[Generated] = []
    kept_groups = 0
    count = 0
    while count < cfg.algorithm.dynamic_sampling.max_rounds:
        count += 1
        gen = rounds.run(worker, stream.take(P), f"{step}-{count}", timing)
        generated.append(gen)
        shaped, valid = shaped_rewards(gen, cfg)
        keep = ~zero_variance_groups(shaped.view(-1, G), valid.view(-1, G))
        keep &= torch.cumsum(keep.long(), 0) <= P - kept_groups  # no more than the batch needs
        if keep.any():
            kept.append(gen.select_groups(keep, G))
            kept_groups += int(keep.sum())
        if kept_groups >= P:
            break
    everything = merge_generated(generated, rounds.pad_id)
    if not kept:
        kept = [generated[-1]]
    return Collected(everything, merge_generated(kept, rounds.pad_id), count)
