"""Rewards from the service: samples out, judgements back, without blocking the GPU/CPU work.

The trainer reaches the service only through :mod:`rewardhub.client`. Scoring runs on an event
loop in a background thread (:class:`RewardWorker`), so a chunk of responses is being scored
while the next chunk generates and while reference log-probs are computed; the loop only blocks
when it needs the numbers. A sample whose status is not ``ok`` is *masked* (``valid`` false):
its score is the verifier's failure score, which is not a judgement of the response.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from rewardhub.types import OK, Result, Sample
from trainer_client.config import RewardConfig

__all__ = [
    "RewardBatch",
    "RewardWorker",
    "Scorer",
    "ScorerFactory",
    "service_scorer",
    "to_reward_batch",
    "verifier_label",
]


class Scorer(Protocol):
    """What the trainer needs of a reward source (:class:`rewardhub.client.AsyncRewardClient` is one)."""

    async def score(self, samples: Sequence[Sample], verifier: Any = None) -> list[Result]: ...


ScorerFactory = Callable[[], contextlib.AbstractAsyncContextManager[Scorer]]
"""Opens a scorer inside the worker's event loop (an async client must live on the loop that uses it)."""


@dataclass(frozen=True)
class Scored:
    """The results of one scoring request and when it went out and came back (perf_counter)."""

    results: list[Result]
    sent_at: float
    done_at: float


@dataclass(frozen=True)
class RewardBatch:
    scores: Tensor  # [B] float32: the service's score (the failure score where not ok)
    valid: Tensor  # [B] bool: status ok
    statuses: tuple[str, ...]
    errors: tuple[str | None, ...]
    details: tuple[dict[str, Any], ...]
    steps: tuple[list[float] | None, ...]  # dense per-step/token rewards (implicit PRM), else None
    labels: tuple[str, ...]  # which verifier judged each sample, for the per-verifier breakdown


def verifier_label(spec: Any) -> str:
    """A short name for a verifier spec: its registered name, or ``sum``/``gate`` for compositions."""
    if spec is None:
        return "default"
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict):
        if "name" in spec:
            return str(spec["name"])
        for key in ("sum", "gate"):
            if key in spec:
                return key
    return type(spec).__name__.lower()


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


class RewardWorker:
    """An event loop in a daemon thread that owns the scorer; ``submit`` returns a Future."""

    def __init__(self, factory: ScorerFactory) -> None:
        self._factory = factory
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rewardhub-train-rewards", daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()
        self._scorer: Scorer = self._run(self._open())

    async def _open(self) -> Scorer:
        return await self._stack.enter_async_context(self._factory())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def submit(self, samples: Sequence[Sample], verifier: Any = None) -> concurrent.futures.Future[Scored]:
        """Send ``samples`` for scoring now; the future resolves when the answer is back."""
        sent_at = time.perf_counter()

        async def score() -> Scored:
            results = await self._scorer.score(list(samples), verifier=verifier)
            return Scored(results, sent_at, time.perf_counter())

        return asyncio.run_coroutine_threadsafe(score(), self._loop)

    def call(self, method: str) -> Any:
        """Run one of the scorer's other coroutines (``health``, ``verifiers``) and wait for it."""
        return self._run(getattr(self._scorer, method)())

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._stack.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> RewardWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def service_scorer(cfg: RewardConfig, url: str) -> ScorerFactory:
    """A factory of :class:`rewardhub.client.AsyncRewardClient` for the service at ``url``."""

    @contextlib.asynccontextmanager
    async def factory() -> AsyncIterator[Scorer]:
        from rewardhub.client import AsyncRewardClient

        async with AsyncRewardClient(
            url, api_key=cfg.api_key, timeout=cfg.timeout_s, max_retries=cfg.max_retries
        ) as client:
            yield client

    return factory
