"""Rewards from the service: samples out, judgements back, without blocking the GPU/CPU work.

The trainer reaches the service only over HTTP, through :mod:`rewardhub.client`, and in the
background: the run holds one :class:`~rewardhub.background.RewardChannel` (a child process by
default, or a thread), so a chunk of responses is being scored while the next chunk generates
and while log-probs are computed; the step only blocks when it needs the numbers. A sample whose
status is not ``ok`` is *masked* (``valid`` false): its score is the verifier's failure score,
which is not a judgement of the response.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from rewardhub.background import RewardChannel, RewardProcess, RewardSourceFactory, RewardThread
from rewardhub.types import OK, Result, verifier_label

from .config import RewardConfig, TrainConfig

__all__ = [
    "RewardBatch",
    "reward_channel",
    "reward_service",
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

    def select(self, rows: Sequence[int]) -> RewardBatch:
        """The samples ``rows``, in that order."""
        idx = torch.as_tensor(rows, dtype=torch.long)
        return RewardBatch(
            scores=self.scores[idx],
            valid=self.valid[idx],
            statuses=tuple(self.statuses[i] for i in rows),
            errors=tuple(self.errors[i] for i in rows),
            details=tuple(self.details[i] for i in rows),
            steps=tuple(self.steps[i] for i in rows),
            labels=tuple(self.labels[i] for i in rows),
        )

    def with_dense(self, dense: RewardBatch) -> RewardBatch:
        """These outcome judgements with ``dense``'s per-token rewards (``reward.dense``, PRIME).

        A sample the dense verifier could not judge is masked like one the outcome verifier could
        not: without its dense rewards PRIME's advantage would read zeros as rewards. Its status and
        error become the dense verifier's (the error prefixed ``dense:``); the outcome score stays.
        """
        if len(dense.scores) != len(self.scores):
            raise ValueError(f"{len(dense.scores)} dense judgements for {len(self.scores)} samples")
        lost = self.valid & ~dense.valid
        return dataclasses.replace(
            self,
            valid=self.valid & dense.valid,
            statuses=tuple(
                d if bad else s for s, d, bad in zip(self.statuses, dense.statuses, lost.tolist(), strict=True)
            ),
            errors=tuple(
                f"dense: {d}" if bad else e for e, d, bad in zip(self.errors, dense.errors, lost.tolist(), strict=True)
            ),
            steps=dense.steps,
        )

    @staticmethod
    def concat(parts: Sequence[RewardBatch]) -> RewardBatch:
        return RewardBatch(
            scores=torch.cat([p.scores for p in parts]),
            valid=torch.cat([p.valid for p in parts]),
            statuses=tuple(s for p in parts for s in p.statuses),
            errors=tuple(s for p in parts for s in p.errors),
            details=tuple(s for p in parts for s in p.details),
            steps=tuple(s for p in parts for s in p.steps),
            labels=tuple(s for p in parts for s in p.labels),
        )


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


@contextlib.contextmanager
def reward_service(cfg: TrainConfig) -> Iterator[str]:
    """The URL of the reward service: the configured one, or an embedded one started here."""
    if cfg.reward.embedded:
        from rewardhub.launcher import ServiceProcess, ServiceThread

        workers = cfg.reward.embedded_workers
        server = ServiceProcess(workers) if cfg.reward.embedded_in == "subprocess" else ServiceThread(workers=workers)
        with server as url:
            yield url
    elif cfg.reward.url is not None:
        yield cfg.reward.url
    else:
        raise ValueError("no reward service: set reward.url, or reward.embedded: true to start one for this run")


def service_scorer(cfg: RewardConfig, url: str) -> RewardSourceFactory:
    """A factory of :class:`rewardhub.client.AsyncRewardClient` for the service at ``url``.

    A partial of the client class (which is its own async context manager), so it pickles: the
    :class:`~rewardhub.background.RewardProcess` child builds its client from it.
    """
    from rewardhub.client import AsyncRewardClient

    return functools.partial(
        AsyncRewardClient, url, api_key=cfg.api_key, timeout=cfg.timeout_s, max_retries=cfg.max_retries
    )


@contextlib.contextmanager
def reward_channel(cfg: TrainConfig, scorer: RewardSourceFactory | None = None) -> Iterator[RewardChannel]:
    """The run's one way to the rewards, open for the block.

    ``scorer`` (tests, offline experiments) is run in a :class:`~rewardhub.background.RewardThread`;
    otherwise the service of :func:`reward_service` is asked over HTTP from a
    :class:`~rewardhub.background.RewardProcess` (``reward.client_process``) or a thread.
    """
    with contextlib.ExitStack() as stack:
        if scorer is not None:
            yield stack.enter_context(RewardThread(scorer))
            return
        factory = service_scorer(cfg.reward, stack.enter_context(reward_service(cfg)))
        yield stack.enter_context(RewardProcess(factory) if cfg.reward.client_process else RewardThread(factory))
