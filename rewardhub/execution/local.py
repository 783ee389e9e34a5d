"""The embedded execution engine: everything on this machine, no broker.

Calls are routed by the verifier's kind, the same split the Celery mode uses for its queues:

- ``rule`` and ``group`` calls go to the CPU pool (memory-limited worker processes);
- ``code`` calls go to their own pool without an address-space limit (the sandbox sets its own
  limits, and an inherited RLIMIT_AS would break the programs it runs);
- ``model`` and ``judge`` calls go to the micro-batcher, which loads each model once in this
  process and batches concurrent requests;
- ``inline`` calls (exact match and friends: :attr:`~rewardhub.calls.Call.inline`, from the
  traits the scorer resolved) run right here: a pool round trip costs more than the work (see
  bench/overhead.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from rewardhub.calls import Call, failure, run_call
from rewardhub.errors import ExecutionError, Overloaded
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.execution.pool import Sink, WorkerPool, fork_server_modules
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import TIMEOUT, Result

__all__ = ["LocalExecutor"]

INLINE_IN_LOOP = 256  # above this many inline calls, score them in a thread to keep the loop responsive


class LocalExecutor(Executor):
    def __init__(self, settings: Settings, registry: Registry) -> None:
        self.settings = settings
        self.registry = registry
        # Each worker is handed these settings as it starts: a code verifier there reads its
        # sandbox backend from them (rewardhub.settings.current).
        self.cpu_pool = WorkerPool(
            "cpu",
            settings.cpu_workers(),
            plugin_files=registry.plugin_files,
            memory_mb=settings.worker_memory_mb,
            preload=fork_server_modules(registry),
            settings=settings,
        )
        # One fork server per process: the code pool's workers fork from the same one, so they pass
        # the same preload (a second list would replace the first before either pool starts).
        self.code_pool = WorkerPool(
            "code",
            settings.code_worker_count(),
            plugin_files=registry.plugin_files,
            preload=fork_server_modules(registry),
            warm_kinds=("code",),
            settings=settings,
        )
        self._code_starting: concurrent.futures.Future[None] | None = None
        self._batcher: Any = None
        self._pending: dict[str, list[tuple[list[Call], Sink, asyncio.Future[None]]]] = {}
        self._handoffs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Handoff] = weakref.WeakKeyDictionary()

    async def start(self) -> None:
        """The CPU pool now; the code pool (workers, their sandboxes) behind it, in the background:
        the service is ready as soon as it was before, and a first code batch finds them warm."""
        await asyncio.to_thread(self.cpu_pool.start)
        if self.settings.code_workers_at_start:
            self._start_code_pool()

    def _start_code_pool(self) -> concurrent.futures.Future[None]:
        """The code pool's start, once, in a thread of its own; any event loop may wait for it."""
        starting = self._code_starting
        if starting is None or (starting.done() and starting.exception() is not None):  # a failed start: again
            self._code_starting = concurrent.futures.Future()
            threading.Thread(target=_resolve, args=(self._code_starting, self.code_pool.start), daemon=True).start()
        return self._code_starting

    async def close(self) -> None:
        if self._batcher is not None:
            await self._batcher.close()
        await asyncio.to_thread(self.cpu_pool.shutdown)
        if self._code_starting is not None:
            # never shut a pool down halfway through its start (a failed start has nothing to shut)
            await asyncio.wait([asyncio.wrap_future(self._code_starting)])
        if self.code_pool.started:
            await asyncio.to_thread(self.code_pool.shutdown)

    def admit(self, n_samples: int) -> None:
        depth = self.queue_depth()
        if depth + n_samples > self.settings.max_pending_samples:
            raise Overloaded(
                f"queue full: {depth} samples pending, limit {self.settings.max_pending_samples}",
                retry_after=1.0 + depth / max(1, 200 * self.settings.cpu_workers()),
            )

    def readiness(self) -> list[str]:
        if not self.cpu_pool.started:
            return ["cpu worker pool not started"]
        if self.cpu_pool.ready_workers() == 0:
            return ["no cpu worker is ready"]
        return []

    def queue_depth(self) -> int:
        depth = self.cpu_pool.pending() + (self.code_pool.pending() if self.code_pool.started else 0)
        return depth

    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        results: list[list[Result] | None] = [None] * len(calls)
        waits: list[asyncio.Future[Any]] = []

        def done(index: int, value: list[Result]) -> None:
            results[index] = value
            if on_progress is not None:
                on_progress(len(value))

        inline, pooled, code, model = [], [], [], []
        for i, call in enumerate(calls):
            if call.inline:
                inline.append(i)
            elif call.kind in ("model", "judge"):
                model.append(i)
            elif call.kind == "code":
                code.append(i)
            else:
                pooled.append(i)

        if code and not self.code_pool.started:
            await asyncio.wrap_future(self._start_code_pool())
        for indices, pool in ((pooled, self.cpu_pool), (code, self.code_pool)):
            if indices:
                if not pool.started:
                    await asyncio.to_thread(pool.start)
                waits.append(self._submit_soon(pool, [calls[i] for i in indices], indices, done))
        if model:
            batcher = self._model_batcher()
            for i in model:
                waits.append(asyncio.ensure_future(self._score_model(batcher, calls[i], i, done)))
        if inline:
            if len(inline) <= INLINE_IN_LOOP:
                for i in inline:
                    done(i, run_call(self.registry, calls[i]))
            else:
                values = await asyncio.to_thread(lambda: [run_call(self.registry, calls[i]) for i in inline])
                for i, value in zip(inline, values, strict=True):
                    done(i, value)
        if len(waits) == 1:  # the common case: no gather (and its extra future) around one wait
            await waits[0]
        elif waits:
            await asyncio.gather(*waits)
        return [r if r is not None else [] for r in results]

    def _submit_soon(
        self, pool: WorkerPool, calls: list[Call], indices: list[int], done: Callable[[int, list[Result]], None]
    ) -> asyncio.Future[None]:
        """Queue ``calls`` for the pool; the future is done when all of them are answered.

        Answers come back in batches (see :data:`~rewardhub.execution.pool.Sink`) through one
        :class:`_Handoff`, and calls queued in one loop iteration leave in one submit, so concurrent
        one-sample requests (OpenRLHF's single-turn mode) become chunks instead of one dispatch
        each, and their answers wake the loop once per worker message instead of once per request.
        """
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        remaining = len(calls)

        def receive(pairs: list[tuple[int, list[Result]]]) -> None:  # on the event loop
            nonlocal remaining
            for position, value in pairs:
                done(indices[position], value)
            remaining -= len(pairs)
            if remaining <= 0 and not finished.done():
                finished.set_result(None)

        handoff = self._handoffs.get(loop)
        if handoff is None:
            handoff = self._handoffs[loop] = _Handoff(loop)

        def sink(pairs: list[tuple[int, list[Result]]]) -> None:  # on the pool's manager thread
            handoff.put(receive, pairs)

        batch = self._pending.get(pool.name)
        if batch is None:
            batch = self._pending[pool.name] = []
            loop.call_soon(self._flush, pool)
        batch.append((calls, sink, finished))
        return finished

    def _flush(self, pool: WorkerPool) -> None:
        batch = self._pending.pop(pool.name, [])
        if not batch:
            return
        try:
            pool.submit_to([(calls, sink) for calls, sink, _ in batch])
        except ExecutionError as exc:
            for _, _, finished in batch:
                if not finished.done():
                    finished.set_exception(exc)

    async def _score_model(self, batcher: Any, call: Call, index: int, done: Any) -> None:
        try:
            result = await asyncio.wait_for(batcher.score(call.verifier, call.config, call.samples[0]), call.timeout_s)
            done(index, [result])
        except TimeoutError:
            done(index, failure(call, f"timed out after {call.timeout_s:g}s", status=TIMEOUT))

    def _model_batcher(self) -> Any:
        if self._batcher is None:
            from rewardhub.execution.batching import MicroBatcher

            self._batcher = MicroBatcher(
                self.registry,
                max_batch_size=self.settings.model_batch_size,
                max_wait_ms=self.settings.model_batch_wait_ms,
            )
        return self._batcher


class _Handoff:
    """Answers from the pool's manager thread to the event loop, many requests per wake-up.

    ``loop.call_soon_threadsafe`` writes to the loop's self-pipe on every call. A worker message
    holds the answers of up to 32 one-sample requests, one sink each: handed over one by one, that
    is 32 system calls and loop wake-ups. Here they queue, and only the first of a run schedules
    the loop to take them all.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._queued: list[tuple[Callable[[Any], None], Any]] = []
        self._scheduled = False

    def put(self, receive: Callable[[Any], None], pairs: Any) -> None:
        with self._lock:
            self._queued.append((receive, pairs))
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop closed: nobody waits for these answers any more
            with self._lock:
                self._queued.clear()
                self._scheduled = False

    def _drain(self) -> None:  # on the event loop
        with self._lock:
            queued, self._queued, self._scheduled = self._queued, [], False
        for receive, pairs in queued:
            receive(pairs)


def _resolve(future: concurrent.futures.Future[None], action: Callable[[], None]) -> None:
    try:
        action()
    except BaseException as exc:  # the waiting call sees it; the next code call tries again
        future.set_exception(exc)
    else:
        future.set_result(None)
