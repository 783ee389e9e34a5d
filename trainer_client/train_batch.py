"""From the kept samples to what the update trains on: shaped rewards, the KL penalty, advantages.

The advantage estimator is the one ``algorithm.advantage`` names in
:data:`rewardhub.trainer.algorithms.tables.ADVANTAGE_ESTIMATORS`; with ``kl.where: reward`` its
per-token penalty -beta * KL(pi_old || pi_ref) enters the rewards it sees, and an estimator that
reads dense rewards gets each result's ``steps`` spread over the response tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .algorithms import kl_penalty
from .algorithms.tables import advantage_estimator
from .config import TrainConfig
from .generated import Generated
from .objective import compute_advantages, dense_token_rewards
from .shaping import shaped_rewards
from .update import TrainBatch

__all__ = ["PreparedBatch", "build_train_batch"]


@dataclass(frozen=True)
class PreparedBatch:
    """The update's batch on the device, and the CPU tensors the dumps show beside it."""

    batch: TrainBatch
    shaped: Tensor  # [B] rewards as the advantages saw them
    valid: Tensor  # [B] bool: samples in the loss
    advantages: Tensor  # [B, T]


def build_train_batch(gen: Generated, cfg: TrainConfig, device: torch.device) -> PreparedBatch:
    """The batch of ``gen`` (the kept groups), advantages computed, on ``device``."""
    a = cfg.algorithm
    G = cfg.rollout.group_size
    shaped, valid = shaped_rewards(gen, cfg)
    ro = gen.rollout
    loss_mask = ro.response_mask & valid.unsqueeze(-1)
    penalty = None
    if a.kl.where == "reward" and a.kl.coef > 0 and gen.ref_logp is not None and gen.old_logp is not None:
        penalty = -a.kl.coef * kl_penalty(gen.old_logp, gen.ref_logp, a.kl.estimator) * ro.response_mask
    dense = None
    if advantage_estimator(a.advantage).dense_rewards:
        dense = dense_token_rewards(gen.rewards.steps, ro.response_mask)[0]
    advantages = compute_advantages(a, shaped.view(-1, G), valid.view(-1, G), loss_mask, penalty, dense)
    # on-policy with nothing anchored on the old log-probs: the update uses its fresh ones (ratio 1)
    needs_old = a.epochs * a.mini_batches > 1 or penalty is not None
    batch = TrainBatch(
        prompt_ids=ro.prompt_ids.to(device),
        prompt_mask=ro.prompt_mask.to(device),
        response_ids=ro.response_ids.to(device),
        response_mask=ro.response_mask.to(device),
        loss_mask=loss_mask.to(device),
        advantages=advantages.to(device),
        rollout_logp=ro.logprobs.to(device),
        old_logp=gen.old_logp.to(device) if gen.old_logp is not None and needs_old else None,
        ref_logp=None if gen.ref_logp is None else gen.ref_logp.to(device),
    )
    return PreparedBatch(batch, shaped, valid, advantages)
