"""``execution: celery``: the same calls, scored by Celery workers on a broker.

A batch's calls are split by queue (``cpu``, ``code``, ``gpu``, after their verifier's kind) into
chunks of at most ``chunk_size`` calls whose time limits fit under the broker's visibility
timeout (:mod:`rewardhub.execution.celery_app`); each chunk is one task. Results come back per
chunk, are put back in the calls' order, and every finished chunk reports its samples to
``on_progress`` (that is where ``/v1/jobs`` progress comes from). Inline verifiers (exact match
and friends) are scored right here, as in local mode: a broker round trip costs more than they do.

The event loop never blocks on the broker. One dispatcher thread owns all Celery client calls:
it publishes chunks handed to it and polls the result backend with one MGET for every chunk
still out, sleeping a little longer after each empty poll (2 ms up to 50 ms). Finished chunks
resolve asyncio futures through ``call_soon_threadsafe``. A dropped connection (Redis
restarted) costs a few failed polls and is then reopened; a publish that fails after its
retries fails the request with 503.

Backpressure: each API process bounds the samples it has out (``max_pending_samples``);
:meth:`CeleryExecutor.admit` answers 429 past it, with a ``Retry-After`` from the measured
completion rate. Readiness comes from a monitor thread that pings the broker and asks the
workers which queues they consume, every few seconds.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from celery import states
from kombu.utils.url import maybe_sanitize_url

from rewardhub.calls import Call, failure, run_call
from rewardhub.errors import ExecutionError, Overloaded
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.execution.celery_app import (
    HARD_GRACE_S,
    SOFT_GRACE_S,
    TASK_SCORE_CHUNK,
    TimeLimits,
    chunk_time_limits,
    create_celery_app,
    max_task_seconds,
    queue_for_kind,
)
from rewardhub.execution.celery_tasks import CallPayload, ChunkOutcome, ChunkPayload
from rewardhub.logging import current_request_id
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import TIMEOUT, Result

__all__ = ["CeleryExecutor"]

log = logging.getLogger(__name__)

INLINE_IN_LOOP = 256  # above this many inline calls, score them in a thread
MIN_POLL_S, MAX_POLL_S = 0.002, 0.05
MGET_BATCH = 1000
MONITOR_EVERY_S = 5.0
RATE_WINDOW_S = 10.0
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (OSError, ConnectionError)

try:  # the exact connection errors of the clients we use
    import redis.exceptions
    from kombu.exceptions import OperationalError

    CONNECTION_ERRORS += (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OperationalError)
except ImportError:  # pragma: no cover - celery[redis] brings both
    pass


@dataclass(frozen=True)
class _Lost:
    """A chunk whose result will never come: its samples get ``error`` with this message."""

    message: str


Outcome = dict[str, Any] | ExecutionError | _Lost  # result meta; publish failed (503); or lost


@dataclass
class _Chunk:
    indices: list[int]  # positions of its calls in the run's call list
    payload: dict[str, Any]
    limits: TimeLimits
    samples: int


@dataclass
class _Pending:
    task_id: str
    deadline: float
    resolve: Callable[[Outcome], None]


@dataclass
class _Outgoing:
    chunk: _Chunk
    deadline_s: float
    resolve: Callable[[Outcome], None]


class _Dispatcher:
    """The one thread that publishes chunks and polls for their results (see module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._outbox: queue.SimpleQueue[_Outgoing | None] = queue.SimpleQueue()
        self._pending: dict[str, _Pending] = {}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rewardhub-celery-dispatch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._outbox.put(None)
        self._thread.join(timeout=10)
        for pending in list(self._pending.values()):
            pending.resolve(_Lost("service shutting down"))
        self._pending.clear()

    def send(self, item: _Outgoing) -> None:
        self._outbox.put(item)

    def _loop(self) -> None:
        interval = MIN_POLL_S
        while not self._stopping.is_set():
            sent = self._send_waiting(interval if self._pending else MAX_POLL_S * 10)
            found = self._poll() if self._pending else 0
            self._expire()
            interval = MIN_POLL_S if sent or found else min(MAX_POLL_S, interval * 2)

    def _send_waiting(self, wait_s: float) -> int:
        try:
            item = self._outbox.get(timeout=wait_s)
        except queue.Empty:
            return 0
        sent = 0
        while item is not None:
            self._publish(item)
            sent += 1
            try:
                item = self._outbox.get_nowait()
            except queue.Empty:
                break
        return sent

    def _publish(self, item: _Outgoing) -> None:
        task_id = uuid.uuid4().hex
        try:
            self.app.send_task(
                TASK_SCORE_CHUNK,
                args=[item.chunk.payload],
                task_id=task_id,
                soft_time_limit=item.chunk.limits.soft_s,
                time_limit=item.chunk.limits.hard_s,
            )
        except CONNECTION_ERRORS as exc:
            log.error("cannot publish a chunk: %s", exc)
            item.resolve(ExecutionError(f"the broker is unreachable: {exc}"))
            return
        self._pending[task_id] = _Pending(task_id, time.monotonic() + item.deadline_s, item.resolve)

    def _poll(self) -> int:
        backend = self.app.backend
        ids = list(self._pending)
        found = 0
        for start in range(0, len(ids), MGET_BATCH):
            batch = ids[start : start + MGET_BATCH]
            try:
                values = backend.mget([backend.get_key_for_task(task_id) for task_id in batch])
            except CONNECTION_ERRORS as exc:
                log.warning("result backend unreachable, retrying: %s", exc)
                self._stopping.wait(0.5)
                return 0
            for task_id, raw in zip(batch, values, strict=True):
                if raw is None:
                    continue
                meta = backend.decode_result(raw)
                if meta.get("status") in states.READY_STATES:
                    found += 1
                    self._pending.pop(task_id).resolve(meta)
        return found

    def _expire(self) -> None:
        now = time.monotonic()
        for task_id in [t for t, p in self._pending.items() if p.deadline <= now]:
            pending = self._pending.pop(task_id)
            log.error("no result for chunk %s; giving up on it", task_id)
            pending.resolve(_Lost("no result came back from the workers in time (chunk lost by the broker?)"))


class _Monitor:
    """Refreshes the readiness reasons every few seconds, off the event loop."""

    def __init__(self, app: Any, required_queue: str) -> None:
        self.app = app
        self.required_queue = required_queue
        self.reasons: list[str] = ["checking the broker and the workers"]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rewardhub-celery-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=10)

    def check(self) -> list[str]:
        url = maybe_sanitize_url(self.app.conf.broker_url)
        try:
            with self.app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=3)
            replies = self.app.control.inspect(timeout=1.0).active_queues() or {}
        except CONNECTION_ERRORS as exc:
            self.reasons = [f"broker unreachable at {url}: {exc}"]
            return self.reasons
        consumed = {q["name"] for queues in replies.values() for q in queues}
        if not replies:
            self.reasons = ["no Celery workers answered"]
        elif self.required_queue not in consumed:
            self.reasons = [f"no worker consumes queue {self.required_queue!r}"]
        else:
            self.reasons = []
        return self.reasons

    def _loop(self) -> None:
        wait_s = 0.0
        while not self._stopping.wait(wait_s):
            wait_s = MONITOR_EVERY_S
            try:
                self.check()
            except Exception as exc:  # the monitor must outlive any one failed check
                log.warning("readiness check failed: %r", exc)
                self.reasons = [f"readiness check failed: {exc!r}"]


@dataclass
class _Throughput:
    """Samples finished in the last ``RATE_WINDOW_S`` seconds, for Retry-After."""

    events: deque[tuple[float, int]] = field(default_factory=deque)

    def add(self, n: int) -> None:
        self.events.append((time.monotonic(), n))

    def per_second(self) -> float:
        cutoff = time.monotonic() - RATE_WINDOW_S
        while self.events and self.events[0][0] < cutoff:
            self.events.popleft()
        return sum(n for _, n in self.events) / RATE_WINDOW_S


class CeleryExecutor(Executor):
    def __init__(self, settings: Settings, registry: Registry) -> None:
        self.settings = settings
        self.registry = registry
        self.app = create_celery_app(settings)
        self.options = self.app.rewardhub_broker  # type: ignore[attr-defined]
        self.max_task_s = max_task_seconds(self.options)
        if settings.max_timeout_s + SOFT_GRACE_S + HARD_GRACE_S > self.max_task_s:
            log.warning(
                "max_timeout_s=%gs does not fit under the broker's visibility timeout (%gs): a call that long "
                "may be delivered twice; raise visibility_timeout in the broker URL",
                settings.max_timeout_s,
                self.options.visibility_timeout_s,
            )
        full = chunk_time_limits([settings.sample_timeout_s] * settings.chunk_size).hard_s
        if full > self.max_task_s:
            log.warning(
                "chunks of %d rule calls at %gs each would outlast 45%% of the visibility timeout (%gs); "
                "they will be cut shorter, which costs throughput",
                settings.chunk_size,
                settings.sample_timeout_s,
                self.options.visibility_timeout_s,
            )
        self._dispatcher = _Dispatcher(self.app)
        self._monitor = _Monitor(self.app, self.options.queue("cpu"))
        self._in_flight = 0
        self._throughput = _Throughput()
        self._started = False

    async def start(self) -> None:
        if self._started:
            return
        self._dispatcher.start()
        self._monitor.start()  # its first check runs at once; /readyz says "checking" until then
        self._started = True

    async def close(self) -> None:
        if not self._started:
            return
        self._started = False
        await asyncio.to_thread(self._dispatcher.stop)
        await asyncio.to_thread(self._monitor.stop)
        self.app.close()

    def admit(self, n_samples: int) -> None:
        depth = self.queue_depth()
        limit = self.settings.max_pending_samples
        if depth + n_samples > limit:
            rate = self._throughput.per_second()
            retry_after = min(60.0, max(1.0, depth / rate)) if rate > 0 else 5.0
            raise Overloaded(f"queue full: {depth} samples out to the workers, limit {limit}", retry_after=retry_after)

    def readiness(self) -> list[str]:
        return ["executor not started"] if not self._started else list(self._monitor.reasons)

    def queue_depth(self) -> int:
        return self._in_flight

    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        if not self._started:
            raise ExecutionError("the Celery executor is not started")
        results: list[list[Result] | None] = [None] * len(calls)
        inline = [i for i, call in enumerate(calls) if self._is_inline(call)]
        remote = [i for i, call in enumerate(calls) if not self._is_inline(call)]
        chunks = self._chunks(calls, remote)

        async def collect(chunk: _Chunk, future: asyncio.Future[Outcome]) -> None:
            outcome = await future
            if isinstance(outcome, ExecutionError):
                raise outcome
            values = self._chunk_results(chunk, [calls[i] for i in chunk.indices], outcome)
            for i, value in zip(chunk.indices, values, strict=True):
                results[i] = value
            if on_progress is not None:
                on_progress(chunk.samples)

        waits = [collect(chunk, self._submit(chunk)) for chunk in chunks]
        self._in_flight += len(remote)
        try:
            await self._run_inline(calls, inline, results, on_progress)
            done = await asyncio.gather(*waits, return_exceptions=True)
        finally:
            self._in_flight -= len(remote)
        for error in done:
            if isinstance(error, BaseException):
                raise error
        return [r if r is not None else [] for r in results]

    # --- pieces of run ---------------------------------------------------------------------------
    def _is_inline(self, call: Call) -> bool:
        return self.registry.verifier_class(call.verifier).inline and call.kind not in ("model", "judge")

    def _chunks(self, calls: Sequence[Call], indices: Sequence[int]) -> list[_Chunk]:
        """Consecutive calls of one queue, at most ``chunk_size`` of them, limits under the timeout."""
        by_queue: dict[str, list[int]] = {}
        for i in indices:
            by_queue.setdefault(queue_for_kind(calls[i].kind), []).append(i)
        chunks: list[_Chunk] = []
        request_id = current_request_id()
        for members in by_queue.values():
            current: list[int] = []
            for i in members:
                candidate = [*current, i]
                too_long = chunk_time_limits([calls[j].timeout_s for j in candidate]).hard_s > self.max_task_s
                if current and (len(current) >= self.settings.chunk_size or too_long):
                    chunks.append(self._chunk(calls, current, request_id))
                    current = [i]
                else:
                    current = candidate
            if current:
                chunks.append(self._chunk(calls, current, request_id))
        return chunks

    @staticmethod
    def _chunk(calls: Sequence[Call], indices: list[int], request_id: str | None) -> _Chunk:
        payload = ChunkPayload(request_id=request_id, calls=[CallPayload.from_call(calls[i]) for i in indices])
        limits = chunk_time_limits([calls[i].timeout_s for i in indices])
        samples = sum(len(calls[i].samples) for i in indices)
        return _Chunk(indices, payload.model_dump(mode="json"), limits, samples)

    def _submit(self, chunk: _Chunk) -> asyncio.Future[Outcome]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()

        def resolve(outcome: Outcome) -> None:  # called on the dispatcher thread
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

        # a chunk is delivered at most twice before it is given up on, plus its time in the queue
        deadline_s = 2 * self.options.visibility_timeout_s + 2 * chunk.limits.hard_s
        self._dispatcher.send(_Outgoing(chunk, deadline_s, resolve))
        return future

    async def _run_inline(
        self,
        calls: Sequence[Call],
        inline: list[int],
        results: list[list[Result] | None],
        on_progress: ProgressCallback | None,
    ) -> None:
        if not inline:
            return
        if len(inline) <= INLINE_IN_LOOP:
            values = [run_call(self.registry, calls[i]) for i in inline]
        else:
            values = await asyncio.to_thread(lambda: [run_call(self.registry, calls[i]) for i in inline])
        for i, value in zip(inline, values, strict=True):
            results[i] = value
        if on_progress is not None:
            on_progress(sum(len(v) for v in values))

    def _chunk_results(self, chunk: _Chunk, calls: list[Call], outcome: Outcome) -> list[list[Result]]:
        if isinstance(outcome, _Lost | ExecutionError):
            return [failure(call, outcome.message) for call in calls]
        self._throughput.add(chunk.samples)
        if outcome.get("status") != states.SUCCESS:
            error = outcome.get("result")
            kind = type(error).__name__ if isinstance(error, BaseException) else str(outcome.get("status"))
            if kind == "TimeLimitExceeded":
                return [failure(call, "the chunk hit the worker's hard time limit", status=TIMEOUT) for call in calls]
            return [failure(call, f"the worker failed the chunk: {kind}: {error}") for call in calls]
        parsed = ChunkOutcome.model_validate(outcome["result"])
        if len(parsed.results) != len(calls):
            return [
                failure(call, f"the worker answered {len(parsed.results)} results for {len(calls)} calls")
                for call in calls
            ]
        return parsed.results


def _settle(future: asyncio.Future[Outcome], outcome: Outcome) -> None:
    if not future.done():
        future.set_result(outcome)
