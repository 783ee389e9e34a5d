"""Rewards from the service: samples out, judgements back, without blocking the GPU/CPU work.

The trainer reaches the service only through :mod:`rewardhub.client`, in the background
(:mod:`rewardhub.background`: a child process by default, or a thread), so a chunk of responses
is being scored while the next chunk generates and while log-probs are computed; the loop only
blocks when it needs the numbers. A sample whose status is not ``ok`` is *masked* (``valid`` false):
its score is the verifier's failure score, which is not a judgement of the response.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from rewardhub.background import RewardProcess, RewardWorker, Scored, Scorer, ScorerFactory
from rewardhub.types import OK, Result, verifier_label

from .config import RewardConfig

__all__ = [
    "RewardBatch",
    "RewardProcess",
    "RewardWorker",
    "Scored",
    "Scorer",
    "ScorerFactory",
    "service_scorer",
    "to_reward_batch",
    "verifier_label",
]


@dataclass(frozen=True)
class RewardBatch:
    scores: Tensor  # [B] float32: the service's score (the failure score where not ok)
    valid: Tensor  # [B] bool: status ok
    statuses: tuple[str, ...]
    errors: tuple[str | None, ...]
    details: tuple[dict[str, Any], ...]
    steps: tuple[list[float] | None, ...]  # dense per-step/token rewards (implicit PRM), else None
    labels: tuple[str, ...]  # which verifier judged each sample, for the per-verifier breakdown


def to_reward_batch(results: Sequence[Result], labels: Sequence[str]) -> RewardBatch:
    if len(results) != len(labels):
        raise ValueError(f"the service returned {len(results)} results for {len(labels)} samples")
    return RewardBatch(
        scores=torch.tensor([r.score for r in results], dtype=torch.float32),
        valid=torch.tensor([r.status == OK for r in results], dtype=torch.bool),
        statuses=tuple(r.status for r in results),
        errors=tuple(r.error for r in results),
        details=tuple(r.details for r in results),
        steps=tuple(r.steps for r in results),
        labels=tuple(labels),
    )


def service_scorer(cfg: RewardConfig, url: str) -> ScorerFactory:
    """A factory of :class:`rewardhub.client.AsyncRewardClient` for the service at ``url``.

    A partial of the client class (which is its own async context manager), so it pickles: the
    :class:`~rewardhub.background.RewardProcess` child builds its client from it.
    """
    from rewardhub.client import AsyncRewardClient

    return functools.partial(
        AsyncRewardClient, url, api_key=cfg.api_key, timeout=cfg.timeout_s, max_retries=cfg.max_retries
    )
