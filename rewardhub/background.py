"""Scoring in the background: a request goes out now, its answer is a Future collected later.

A trainer overlaps scoring with its own work (generating the next chunk, computing log-probs).
Two ways to do that behind one interface (``submit``, ``call``, ``close``):

- :class:`RewardThread`: an event loop in a daemon thread owns an async scorer (usually
  :class:`~rewardhub.client.AsyncRewardClient`). It overlaps the waiting, but the Python work of
  building, sending and parsing requests shares the interpreter lock with the caller.
- :class:`RewardProcess`: the same thread inside a child process, so that work never holds the
  caller's interpreter. Measured in ``rewardhub-train`` on the toy task (32 samples per request):
  ~2.6 ms of client CPU per request, which made the overlapped forward pass ~3.5 ms slower per
  step in a thread and costs nothing in a child. The caller pays only for pickling the samples.
  The scorer factory must pickle (a class, or a partial of one); the child starts from the fork
  server and imports only this package's client side, not the caller's modules.

Both are a :class:`RewardChannel`, the one name a trainer holds them by.

This is the client run off the caller's thread: it imports the vocabulary and the launcher, never
the service's code (``tests/test_layering.py`` keeps it so).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import pickle
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any, Protocol

from rewardhub.launcher import WorkerProcess
from rewardhub.types import Result, Sample

__all__ = [
    "RewardChannel",
    "RewardProcess",
    "RewardProcessError",
    "RewardSource",
    "RewardSourceFactory",
    "RewardThread",
    "Scored",
]


class RewardSource(Protocol):
    """What the trainer needs of a reward source (:class:`rewardhub.client.AsyncRewardClient` is one).

    Not :class:`rewardhub.scoring.Scorer`, the service's own scorer of verifier trees: a reward
    source is whatever answers ``score`` for a caller, usually the service over HTTP."""

    async def score(self, samples: Sequence[Sample], verifier: Any = None) -> list[Result]: ...


RewardSourceFactory = Callable[[], contextlib.AbstractAsyncContextManager[RewardSource]]
"""Opens a reward source inside the reward thread's event loop (an async client must live on the loop that uses it)."""


@dataclass(frozen=True)
class Scored:
    """The results of one scoring request and when it went out and came back (perf_counter)."""

    results: list[Result]
    sent_at: float
    done_at: float


class RewardChannel(Protocol):
    """Where a trainer sends samples to be scored in the background: a :class:`RewardThread` or a
    :class:`RewardProcess`. ``submit`` returns at once; the future resolves when the answer is back."""

    def submit(self, samples: Sequence[Sample], verifier: Any = None) -> concurrent.futures.Future[Scored]: ...

    def call(self, method: str) -> Any: ...

    def close(self) -> None: ...


class RewardThread:
    """An event loop in a daemon thread that owns the scorer; ``submit`` returns a Future."""

    def __init__(self, factory: RewardSourceFactory) -> None:
        self._factory = factory
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rewardhub-scorer", daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()
        self._scorer: RewardSource = self._run(self._open())

    async def _open(self) -> RewardSource:
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

    def submit_call(self, method: str) -> concurrent.futures.Future[Any]:
        """Start one of the scorer's other coroutines (``health``, ``verifiers``)."""
        return asyncio.run_coroutine_threadsafe(getattr(self._scorer, method)(), self._loop)

    def call(self, method: str) -> Any:
        """Run one of the scorer's other coroutines and wait for it."""
        return self.submit_call(method).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._stack.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> RewardThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RewardProcessError(RuntimeError):
    """The child process could not start its scorer, or exited with requests outstanding."""


class RewardProcess:
    """A child process that owns the scorer; ``submit`` returns a Future, as :class:`RewardThread`'s does."""

    def __init__(self, factory: RewardSourceFactory, start_timeout_s: float = 120.0) -> None:
        self._conn, child = Pipe()
        self._process = WorkerProcess(target=_child_main, args=(child, factory), name="rewardhub-scorer", daemon=True)
        self._process.start()
        child.close()
        if not self._conn.poll(start_timeout_s):
            self._process.kill()
            raise RewardProcessError(f"the reward process did not start within {start_timeout_s:.0f}s")
        try:
            kind, payload = self._conn.recv()
        except EOFError:
            self._process.join(timeout=10)
            raise RewardProcessError(
                f"the reward process exited during start-up (exit code {self._process.exitcode})"
            ) from None
        if kind != "ready":
            self._process.join(timeout=10)
            raise payload
        self._pending: dict[int, tuple[concurrent.futures.Future[Any], float, str]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="rewardhub-scorer-replies", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def submit(self, samples: Sequence[Sample], verifier: Any = None) -> concurrent.futures.Future[Scored]:
        """Send ``samples`` for scoring now; the future resolves when the answer is back."""
        return self._request("score", (list(samples), verifier))

    def call(self, method: str) -> Any:
        """Run one of the scorer's other coroutines (``health``, ``verifiers``) and wait for it."""
        return self._request("call", (method,)).result()

    def _request(self, kind: str, args: tuple[Any, ...]) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise RewardProcessError("the reward process is closed")
            request_id = next(self._ids)
            self._pending[request_id] = (future, time.perf_counter(), kind)
        self._conn.send((kind, request_id, *args))
        return future

    def _read(self) -> None:
        """Resolve each future as its reply arrives; fail them all if the child goes away."""
        while True:
            try:
                request_id, ok, payload = self._conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                future, sent_at, kind = self._pending.pop(request_id)
            if not ok:
                future.set_exception(payload)
            elif kind == "score":  # timed here, so the pipe's latency counts too
                future.set_result(Scored(payload.results, sent_at, time.perf_counter()))
            else:
                future.set_result(payload)
        with self._lock:
            self._closed = True
            pending, self._pending = self._pending, {}
        for future, _, _ in pending.values():
            future.set_exception(RewardProcessError("the reward process exited with this request outstanding"))

    def close(self) -> None:
        with self._lock:
            if self._closed and not self._process.is_alive():
                return
            self._closed = True
        try:
            self._conn.send(None)
        except OSError:
            pass
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)
        self._reader.join(timeout=10)
        self._conn.close()

    def __enter__(self) -> RewardProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _child_main(conn: Connection, factory: RewardSourceFactory) -> None:
    """The child: open the scorer, then answer requests until told to stop (or the parent goes)."""
    try:
        thread = RewardThread(factory)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(("failed", _portable(exc)))
        return
    conn.send(("ready", None))
    send_lock = threading.Lock()

    def reply(request_id: int, future: concurrent.futures.Future[Any]) -> None:
        try:
            message = (request_id, True, future.result())
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the waiting future
            message = (request_id, False, _portable(exc))
        with send_lock:
            conn.send(message)

    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            kind, request_id, *args = message
            future = thread.submit(*args) if kind == "score" else thread.submit_call(*args)
            future.add_done_callback(lambda f, i=request_id: reply(i, f))
    finally:
        thread.close()
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RewardProcessError carrying its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any pickling failure means: send the text instead
        return RewardProcessError(f"{type(exc).__name__}: {exc}")
    return exc
