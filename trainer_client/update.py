"""One policy update: mini-batches, micro-batches, exact gradient accumulation, clipping.

Each optimizer step covers a mini-batch. The loss denominators are those of the whole
mini-batch (:func:`~rewardhub.trainer.algorithms.aggregation.normaliser_for`), so the gradients
accumulated over micro-batches equal the gradient of the mini-batch loss computed in one pass,
whatever the micro-batch size (tested in tests/trainer/test_update.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import Tensor

from .algorithms import normaliser_for
from .config import TrainConfig
from .logprobs import TokenStats, response_logprobs
from .objective import LossStats, MicroBatch, micro_batch_loss

__all__ = ["TrainBatch", "UpdateResult", "accumulate_gradients", "policy_update"]


@dataclass(frozen=True)
class TrainBatch:
    """The rows the update trains on, all aligned on the response tokens."""

    prompt_ids: Tensor  # [B, Lp]
    prompt_mask: Tensor  # [B, Lp] bool
    response_ids: Tensor  # [B, T]
    response_mask: Tensor  # [B, T] bool
    loss_mask: Tensor  # [B, T] bool: response tokens of samples that enter the loss
    advantages: Tensor  # [B, T]
    rollout_logp: Tensor  # [B, T]
    old_logp: Tensor | None = None  # [B, T]
    ref_logp: Tensor | None = None  # [B, T]

    @property
    def size(self) -> int:
        return self.prompt_ids.shape[0]

    def rows(self, start: int, stop: int) -> TrainBatch:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return TrainBatch(**{k: None if v is None else v[start:stop] for k, v in values.items()})

    def micro(self) -> MicroBatch:
        return MicroBatch(self.loss_mask, self.advantages, self.rollout_logp, self.old_logp, self.ref_logp)


@dataclass(frozen=True)
class UpdateResult:
    stats: LossStats
    grad_norms: tuple[float, ...]
    fresh_logp: Tensor  # [B, T] trainer log-probs of the first pass (detached), for metrics and dumps
    lr: float  # the learning rate the update ran at


def accumulate_gradients(
    model: torch.nn.Module, batch: TrainBatch, cfg: TrainConfig, prefetched: TokenStats | None = None
) -> tuple[LossStats, Tensor]:
    """Backward over ``batch`` in micro-batches of ``optim.micro_batch_size``; gradients add up to
    the whole batch's.

    ``prefetched`` is the first micro-batch's forward pass, already run (the step runs it while
    the service scores). Returns the statistics and the fresh log-probs [B, T] (detached).
    """
    a = cfg.algorithm
    constant_length = a.aggregation_constant or cfg.rollout.max_new_tokens
    temperature = cfg.rollout.temperature or 1.0
    norm = normaliser_for(batch.loss_mask, a.aggregation, constant_length)
    size = cfg.optim.micro_batch_size or batch.size
    stats = LossStats()
    fresh: list[Tensor] = []
    for start in range(0, batch.size, size):
        part = batch.rows(start, start + size)
        if start == 0 and prefetched is not None:
            tokens = prefetched
        else:
            tokens = response_logprobs(
                model,
                part.prompt_ids,
                part.prompt_mask,
                part.response_ids,
                part.response_mask,
                temperature,
                with_entropy=True,
            )
        assert tokens.entropy is not None
        loss, part_stats = micro_batch_loss(a, tokens.logprobs, tokens.entropy, part.micro(), norm)
        loss.backward()
        stats.merge(part_stats)
        fresh.append(tokens.logprobs.detach())
    return stats, torch.cat(fresh)


def policy_update(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: TrainBatch,
    cfg: TrainConfig,
    prefetched: TokenStats | None = None,
) -> UpdateResult:
    """``algorithm.epochs`` passes over ``algorithm.mini_batches`` mini-batches, one optimizer step each.

    ``prefetched`` (the forward pass of the very first micro-batch) is only valid for a single
    optimizer step: after it, the weights have moved.
    """
    a, max_grad_norm = cfg.algorithm, cfg.optim.max_grad_norm
    if prefetched is not None and a.off_policy:
        raise ValueError("a prefetched forward pass is only valid for a single optimizer step")
    lr = optimizer.param_groups[0]["lr"]
    params = [p for p in model.parameters() if p.requires_grad]
    stats = LossStats()
    norms: list[float] = []
    first_pass: list[Tensor] = []
    mini = batch.size // a.mini_batches
    for epoch in range(a.epochs):
        for start in range(0, batch.size, mini):
            optimizer.zero_grad(set_to_none=True)
            part_stats, fresh = accumulate_gradients(model, batch.rows(start, start + mini), cfg, prefetched)
            norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm is not None else float("inf"))
            optimizer.step()
            stats.merge(part_stats)
            norms.append(float(norm))
            if epoch == 0:
                first_pass.append(fresh)
    optimizer.zero_grad(set_to_none=True)
    return UpdateResult(stats=stats, grad_norms=tuple(norms), fresh_logp=torch.cat(first_pass), lr=lr)
