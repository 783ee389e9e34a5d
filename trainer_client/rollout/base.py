"""What a rollout engine returns, and the interface the trainer drives engines through.

A :class:`Rollout` is a batch of prompts with one sampled response each: token ids, masks, and
the engine's own log-probability of every sampled token. Those log-probs *are* the behaviour
policy (DESIGN.md): the trainer never substitutes its own recomputation for them, it compares
against them to measure and correct the train-inference mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

__all__ = ["Rollout", "RolloutEngine", "SamplingParams", "concat_rollouts", "distinct_prompts", "left_pad"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample; ``temperature == 0`` means greedy."""

    max_new_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    top_logprobs: int = 0
    """Also return the k largest log-probabilities of every position (0: none), for rewards that read them."""


@dataclass(frozen=True)
class Rollout:
    """B prompts (left-padded) with one response each (right-padded).

    ``logprobs`` are log pi_rollout(y_t | context) of the sampled tokens under the distribution
    actually sampled from (after temperature, top-k and top-p), 0 at padding.
    """

    prompt_ids: Tensor  # [B, Lp] long, left-padded
    prompt_mask: Tensor  # [B, Lp] bool
    response_ids: Tensor  # [B, Lr] long, right-padded
    response_mask: Tensor  # [B, Lr] bool, a prefix of ones per row (the EOS token included)
    logprobs: Tensor  # [B, Lr] float32
    truncated: Tensor  # [B] bool: hit max_new_tokens without an end-of-sequence token
    texts: tuple[str, ...]  # decoded responses, special tokens removed
    top_logprobs: Tensor | None = None
    """[B, Lr, k] float32 when asked for (``SamplingParams.top_logprobs``): the k largest log-probs of the
    policy's distribution at the sampling temperature, before top-k/top-p, at each position; 0 at padding."""

    @property
    def size(self) -> int:
        return self.prompt_ids.shape[0]

    @property
    def lengths(self) -> Tensor:
        """Response lengths in tokens. [B]"""
        return self.response_mask.long().sum(-1)

    def select(self, index: Sequence[int] | Tensor) -> Rollout:
        """The rows ``index``, in that order (padding columns kept)."""
        idx = torch.as_tensor(index, dtype=torch.long)
        return Rollout(
            prompt_ids=self.prompt_ids[idx],
            prompt_mask=self.prompt_mask[idx],
            response_ids=self.response_ids[idx],
            response_mask=self.response_mask[idx],
            logprobs=self.logprobs[idx],
            truncated=self.truncated[idx],
            texts=tuple(self.texts[i] for i in idx.tolist()),
            top_logprobs=None if self.top_logprobs is None else self.top_logprobs[idx],
        )


class RolloutEngine(Protocol):
    """Samples responses. ``sync_weights`` is called after every policy update."""

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> Rollout: ...

    def sync_weights(self) -> None: ...


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Tensor, Tensor]:
    """Token lists -> (ids [B, L] left-padded, mask [B, L] bool)."""
    width = max((len(r) for r in rows), default=0)
    ids = torch.tensor([[pad_id] * (width - len(r)) + list(r) for r in rows], dtype=torch.long).view(len(rows), width)
    mask = torch.tensor([[False] * (width - len(r)) + [True] * len(r) for r in rows], dtype=torch.bool)
    return ids, mask.view(len(rows), width)


def distinct_prompts(prompt_ids: Tensor, prompt_mask: Tensor) -> tuple[Tensor, Tensor] | None:
    """``(index, first)`` when rows repeat a prompt (a GRPO group: every completion of one prompt):
    row ``i``'s prompt is row ``first[index[i]]``'s. None when every row's prompt is its own.

    A causal model's pass over a prompt does not depend on what follows it, so the lean decoder's
    prefill and the trainer's log-prob pass run each distinct prompt once and copy its keys and
    values to its rows.  [B, Lp] x 2 -> ([B], [distinct])
    """
    rows = torch.cat([prompt_ids, prompt_mask.long()], dim=1)
    unique, index = torch.unique(rows, dim=0, return_inverse=True)
    if unique.shape[0] == rows.shape[0]:
        return None
    first = torch.full((unique.shape[0],), rows.shape[0], dtype=torch.long, device=rows.device)
    first = first.scatter_reduce(0, index, torch.arange(rows.shape[0], device=rows.device), reduce="amin")
    return index, first


def _pad_to(t: Tensor, width: int, value: float | int | bool, left: bool) -> Tensor:
    missing = width - t.shape[1]
    if missing == 0:
        return t
    fill = torch.full((t.shape[0], missing), value, dtype=t.dtype, device=t.device)
    return torch.cat([fill, t] if left else [t, fill], dim=1)


def concat_rollouts(parts: Sequence[Rollout], pad_id: int) -> Rollout:
    """Stack rollouts of possibly different widths (dynamic sampling refills, chunked generation)."""
    if len(parts) == 1:
        return parts[0]
    lp = max(p.prompt_ids.shape[1] for p in parts)
    lr = max(p.response_ids.shape[1] for p in parts)
    return Rollout(
        prompt_ids=torch.cat([_pad_to(p.prompt_ids, lp, pad_id, left=True) for p in parts]),
        prompt_mask=torch.cat([_pad_to(p.prompt_mask, lp, False, left=True) for p in parts]),
        response_ids=torch.cat([_pad_to(p.response_ids, lr, pad_id, left=False) for p in parts]),
        response_mask=torch.cat([_pad_to(p.response_mask, lr, False, left=False) for p in parts]),
        logprobs=torch.cat([_pad_to(p.logprobs, lr, 0.0, left=False) for p in parts]),
        truncated=torch.cat([p.truncated for p in parts]),
        texts=tuple(text for p in parts for text in p.texts),
        top_logprobs=_concat_top(parts, lr),
    )


def _concat_top(parts: Sequence[Rollout], width: int) -> Tensor | None:
    tops = [p.top_logprobs for p in parts]
    if any(t is None for t in tops):
        return None
    return torch.cat([torch.nn.functional.pad(t, (0, 0, 0, width - t.shape[1])) for t in tops if t is not None])
