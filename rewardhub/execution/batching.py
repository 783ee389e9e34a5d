"""Dynamic micro-batching for model and judge verifiers.

A model answers 32 samples in one forward pass in about the time it takes to answer one, but a
trainer's requests arrive one sample at a time. :class:`MicroBatcher` sits between the executor
and ``score_batch``: concurrent calls of one verifier with one config wait a few milliseconds
for company, then go to the device together.

- A batch closes when it holds ``max_batch_size`` samples, when the next sample would exceed
  ``max_batch_tokens`` (estimated at ~4 characters per token), or ``max_wait_ms`` after its first
  sample arrived, whichever comes first. While a batch runs, the next one fills up.
- Each verifier has one worker thread: the event loop never blocks on a model, and the model is
  used by one thread at a time.
- Identical samples (same prompt, response, reference and metadata) waiting or running together
  are scored once and share the result.
- A batch runs through :func:`~rewardhub.calls.run_call`, like every other call: one
  that raises is retried one sample at a time, so a bad sample fails alone; exceptions become
  that sample's ``status: "error"`` (a VerifierError keeps its message), never a score.
- ``timeout_s`` in the config bounds the caller's wait (``status: "timeout"``). A thread cannot be
  killed, so unlike the process pools this does not stop the work itself.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rewardhub.calls import Call, failure, run_call
from rewardhub.errors import ExecutionError
from rewardhub.registry import Registry
from rewardhub.types import TIMEOUT, Result, Sample, VerifierKind
from rewardhub.verifier import VerifierConfig

__all__ = ["BatcherStats", "MicroBatcher"]

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class BatcherStats:
    calls: int
    batches: int
    samples_scored: int
    deduplicated: int


@dataclass
class _Pending:
    sample: Sample
    future: asyncio.Future[Result]
    tokens: int
    enqueued: float


@dataclass
class _Lane:
    """The calls of one (verifier, config) pair and the task that batches them."""

    verifier: str
    kind: VerifierKind
    config: VerifierConfig
    worker: ThreadPoolExecutor
    items: deque[_Pending] = field(default_factory=deque)
    inflight: dict[str, asyncio.Future[Result]] = field(default_factory=dict)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False
    task: asyncio.Task[None] | None = None


class MicroBatcher:
    def __init__(
        self,
        registry: Registry,
        max_batch_size: int = 32,
        max_wait_ms: float = 5.0,
        max_batch_tokens: int | None = None,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        self.registry = registry
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_ms / 1000.0
        self.max_batch_tokens = max_batch_tokens
        self._lanes: dict[tuple[str, str, str], _Lane] = {}
        self._workers: dict[str, ThreadPoolExecutor] = {}
        self._closed = False
        self._calls = self._batches = self._scored = self._deduplicated = 0

    @property
    def stats(self) -> BatcherStats:
        return BatcherStats(self._calls, self._batches, self._scored, self._deduplicated)

    async def score(self, verifier_name: str, config: VerifierConfig, sample: Sample) -> Result:
        """Score one sample as part of whatever batch forms around it; always a Result."""
        if self._closed:
            raise ExecutionError("the micro-batcher is closed")
        self._calls += 1
        lane = self._lane(verifier_name, config)
        key = _dedup_key(sample)
        future = lane.inflight.get(key)
        if future is not None:
            self._deduplicated += 1
        else:
            future = asyncio.get_running_loop().create_future()
            lane.inflight[key] = future
            future.add_done_callback(lambda done, key=key: _forget(lane.inflight, key, done))
            lane.items.append(_Pending(sample, future, _estimate_tokens(sample), time.monotonic()))
            lane.wakeup.set()
        try:
            result = await asyncio.wait_for(asyncio.shield(future), config.timeout_s)
        except TimeoutError:
            result = Result.failed(
                f"no result within timeout_s={config.timeout_s}", status=TIMEOUT, score=config.failure_score
            )
        return result.model_copy(update={"id": sample.id}) if sample.id is not None else result

    async def close(self) -> None:
        """Finish what is queued, then stop the lanes and worker threads."""
        self._closed = True
        for lane in self._lanes.values():
            lane.closing = True
            lane.wakeup.set()
        await asyncio.gather(*(lane.task for lane in self._lanes.values() if lane.task is not None))
        for worker in self._workers.values():
            worker.shutdown(wait=False)

    # ---- lanes ---------------------------------------------------------------------------

    def _lane(self, name: str, config: VerifierConfig) -> _Lane:
        key = (name, type(config).__qualname__, config.model_dump_json())
        lane = self._lanes.get(key)
        if lane is None:
            kind = self.registry.verifier_class(name).kind  # an unknown name fails the caller now
            worker = self._workers.get(name)
            if worker is None:
                worker = self._workers[name] = ThreadPoolExecutor(1, thread_name_prefix=f"batch-{name}")
            lane = self._lanes[key] = _Lane(name, kind, config, worker)
            lane.task = asyncio.get_running_loop().create_task(self._run(lane), name=f"batcher-{name}")
        return lane

    async def _run(self, lane: _Lane) -> None:
        while True:
            while not lane.items and not lane.closing:
                lane.wakeup.clear()
                await lane.wakeup.wait()
            if not lane.items:
                return  # closing and drained
            await self._fill(lane)
            await self._dispatch(lane, self._take(lane))

    async def _fill(self, lane: _Lane) -> None:
        """Wait for more samples until the batch is full or its first sample has waited enough."""
        deadline = lane.items[0].enqueued + self.max_wait_s
        while not lane.closing and not self._full(lane.items):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            lane.wakeup.clear()
            try:
                async with asyncio.timeout(remaining):
                    await lane.wakeup.wait()
            except TimeoutError:
                return

    def _full(self, items: deque[_Pending]) -> bool:
        if len(items) >= self.max_batch_size:
            return True
        return self.max_batch_tokens is not None and sum(p.tokens for p in items) >= self.max_batch_tokens

    def _take(self, lane: _Lane) -> list[_Pending]:
        """The next batch: at least one sample, then as many as size and token budget allow."""
        batch = [lane.items.popleft()]
        tokens = batch[0].tokens
        while lane.items and len(batch) < self.max_batch_size:
            nxt = lane.items[0].tokens
            if self.max_batch_tokens is not None and tokens + nxt > self.max_batch_tokens:
                break
            batch.append(lane.items.popleft())
            tokens += nxt
        return batch

    async def _dispatch(self, lane: _Lane, batch: list[_Pending]) -> None:
        samples = tuple(p.sample for p in batch)
        call = Call(lane.verifier, lane.config, samples, lane.kind, lane.config.timeout_s or math.inf)
        self._batches += 1
        self._scored += len(batch)
        loop = asyncio.get_running_loop()
        try:
            results = await loop.run_in_executor(lane.worker, run_call, self.registry, call)
        except Exception as exc:  # the worker thread itself failed (shut down): still answer every caller
            results = failure(call, f"the batch could not run: {type(exc).__name__}: {exc}")
        for pending, result in zip(batch, results, strict=True):
            if not pending.future.done():
                pending.future.set_result(result)


_JUDGED_FIELDS = {"prompt", "response", "messages", "reference", "metadata"}


def _dedup_key(sample: Sample) -> str:
    # the conversation is part of what is judged: two trajectories with one final answer are two samples
    judged = sample.model_dump(mode="json", include=_JUDGED_FIELDS, exclude_none=True)
    return json.dumps(judged, sort_keys=True, default=str)


def _estimate_tokens(sample: Sample) -> int:
    chars = len(sample.prompt_text()) + len(sample.response)
    if sample.messages is not None:
        chars += sum(len(m.content) for m in sample.messages)
    if isinstance(sample.reference, str):
        chars += len(sample.reference)
    return chars // CHARS_PER_TOKEN + 1


def _forget(inflight: dict[str, asyncio.Future[Result]], key: str, done: asyncio.Future[Result]) -> None:
    if inflight.get(key) is done:
        del inflight[key]
