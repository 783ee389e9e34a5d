"""``execution: celery``: the same calls, scored by Celery workers on a broker.

A batch's calls are split by queue (``cpu``, ``code``, ``gpu``, after their verifier's kind) into
chunks of at most ``chunk_size`` calls whose time limits fit under the broker's visibility
timeout (:mod:`rewardhub.execution.celery_app`); each chunk is one task. Results come back per
chunk, are put back in the calls' order, and every finished chunk reports its samples to
``on_progress`` (that is where ``/v1/jobs`` progress comes from). Inline calls (exact match and
friends: :attr:`~rewardhub.calls.Call.inline`) are scored right here, as in local mode: a broker
round trip costs more than they do.

The event loop never blocks on the broker: one thread owns every Celery client call
(:mod:`rewardhub.execution.celery_dispatch`), publishes chunks, collects results, and dispatches
again the chunks of a worker that is lost (killed, stopped, partitioned) or of a Redis that
restarted, within seconds rather than the broker's visibility timeout. Finished chunks resolve
asyncio futures through ``call_soon_threadsafe``; each chunk resolves once, whichever of its
deliveries answers first.

Each API process refreshes a liveness key of its own (``instance``): workers skip the chunks of an
API process that is gone, and ``/v1/jobs`` records kept in Redis (:mod:`rewardhub.execution.celery_jobs`) say
whether the process that runs a job is still there, so a job of a restarted API is reported
``failed`` with the reason rather than forgotten.

Backpressure: each API process bounds the samples it has out (``max_pending_samples``);
:meth:`CeleryExecutor.admit` answers 429 past it, with a ``Retry-After`` from the measured
completion rate. Readiness comes from a monitor thread that pings the broker and asks the
workers which queues they consume, every few seconds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from celery import states
from kombu.utils.url import maybe_sanitize_url

from rewardhub.calls import Call, failure, run_call
from rewardhub.errors import ExecutionError, Overloaded
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.execution.celery_app import (
    CONNECTION_ERRORS,
    HARD_GRACE_S,
    SOFT_GRACE_S,
    TimeLimits,
    chunk_time_limits,
    create_celery_app,
    max_task_seconds,
    queue_for_kind,
    result_backend_url,
)
from rewardhub.execution.celery_dispatch import Dispatch, Dispatcher, DispatchStats, Lost, Outcome
from rewardhub.execution.celery_jobs import CeleryJobLiveness
from rewardhub.execution.celery_liveness import Heartbeat, Liveness, liveness_for
from rewardhub.execution.celery_sessions import CelerySessions
from rewardhub.execution.celery_tasks import CallPayload, ChunkOutcome, ChunkPayload
from rewardhub.jobs.records import JobJournal
from rewardhub.jobs.redis_journal import RedisJobJournal
from rewardhub.logging import current_request_id
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import TIMEOUT, Result

__all__ = ["CeleryExecutor"]

log = logging.getLogger(__name__)

INLINE_IN_LOOP = 256  # above this many inline calls, score them in a thread
MONITOR_EVERY_S = 5.0
RATE_WINDOW_S = 10.0


@dataclass
class _Chunk:
    chunk_id: str
    indices: list[int]  # positions of its calls in the run's call list
    payload: dict[str, Any]
    limits: TimeLimits
    samples: int


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
        self.instance = uuid.uuid4().hex  # this API process, as workers and job records know it
        self.liveness: Liveness = liveness_for(self.app)
        self._dispatcher = Dispatcher(
            self.app, self.liveness, self.instance, settings.heartbeat_s, self._broker_servers()
        )
        self._heartbeat = Heartbeat(self.liveness, "api", self.instance, settings.heartbeat_s, CONNECTION_ERRORS)
        self._journal = RedisJobJournal(
            self.liveness.client, settings.result_ttl_s, CeleryJobLiveness(self.liveness, self.instance)
        )
        self._monitor = _Monitor(self.app, self.options.queue("cpu"))
        self.sessions = CelerySessions(self.app, self.liveness, settings.lost_after_s)
        """The service's sessions, each on one session worker; samples judged in one are scored there."""
        self._in_flight = 0
        self._throughput = _Throughput()
        self._started = False

    async def start(self) -> None:
        if self._started:
            return
        await asyncio.to_thread(self._heartbeat.start)  # alive before the first chunk goes out
        self._dispatcher.start()
        self._monitor.start()  # its first check runs at once; /readyz says "checking" until then
        self._started = True

    async def close(self) -> None:
        if not self._started:
            return
        self._started = False
        await asyncio.to_thread(self._dispatcher.stop)
        await asyncio.to_thread(self._monitor.stop)
        await asyncio.to_thread(self._heartbeat.stop, True)
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

    @property
    def dispatch_stats(self) -> DispatchStats:
        """What recovering from lost workers and restarted servers has cost so far."""
        return self._dispatcher.stats

    def job_journal(self) -> JobJournal:
        return self._journal

    def _broker_servers(self) -> list[Liveness]:
        """A Redis broker on another server than the results: its restart loses queued chunks too."""
        if self.options.transport != "redis" or self.options.url == result_backend_url(self.settings, self.options):
            return []
        client = redis.Redis.from_url(self.options.url, socket_timeout=5, socket_connect_timeout=5)
        return [Liveness(client, self.settings.lost_after_s, self.settings.result_ttl_s)]

    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        if not self._started:
            raise ExecutionError("the Celery executor is not started")
        results: list[list[Result] | None] = [None] * len(calls)
        in_session = {i for i, call in enumerate(calls) if self._in_session(call)}
        inline = [i for i, call in enumerate(calls) if i not in in_session and call.inline]
        remote = [i for i, call in enumerate(calls) if i not in in_session and not call.inline]
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

        async def judge(i: int) -> None:  # on the session's worker (celery_sessions)
            loop = asyncio.get_running_loop()
            results[i] = await loop.run_in_executor(self.sessions.threads, self.sessions.score, calls[i])
            if on_progress is not None:
                on_progress(len(calls[i].samples))

        waits = [collect(chunk, self._submit(chunk)) for chunk in chunks] + [judge(i) for i in sorted(in_session)]
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
    def _in_session(self, call: Call) -> bool:
        """A call that judges samples in sessions (``session_tests``, or a sample's ``session_id``)."""
        if call.kind in ("model", "judge") or call.inline:  # neither judges a session
            return False
        judges = call.reads_caller or any(s.session_id for s in call.samples)
        return judges and any(map(self.sessions.session_named, call.samples))

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

    def _chunk(self, calls: Sequence[Call], indices: list[int], request_id: str | None) -> _Chunk:
        chunk_id = uuid.uuid4().hex
        payload = ChunkPayload(
            request_id=request_id,
            chunk_id=chunk_id,
            origin=self.instance,
            calls=[CallPayload.from_call(calls[i]) for i in indices],
        )
        limits = chunk_time_limits([calls[i].timeout_s for i in indices])
        samples = sum(len(calls[i].samples) for i in indices)
        return _Chunk(chunk_id, indices, payload.model_dump(mode="json"), limits, samples)

    def _submit(self, chunk: _Chunk) -> asyncio.Future[Outcome]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()

        def resolve(outcome: Outcome) -> None:  # called on the dispatcher thread
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

        calls = len(chunk.indices)
        self._dispatcher.send(Dispatch(chunk.chunk_id, chunk.payload, chunk.limits, calls, resolve))
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
        if isinstance(outcome, Lost | ExecutionError):
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
