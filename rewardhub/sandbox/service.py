"""The sandbox as a service of this process, for callers on an event loop.

``POST /v1/sandbox/run`` and the ``python`` grader both run programs through :func:`run_program`,
so they share one pool per backend, one set of threads and one bound on waiting runs:

- the pool is the environment's (:func:`~rewardhub.sandbox.pool.default_pool`), or one of its own
  for a service configured with another backend than the environment names;
- runs wait for a sandbox in threads of their own, not in the event loop's default executor that
  the rest of the service shares;
- past ``MAX_WAITING`` waiting runs a new one is refused with
  :class:`~rewardhub.errors.Overloaded` (429) rather than queued without end.

A machine that cannot isolate code raises :class:`~rewardhub.sandbox.errors.SandboxUnavailable`
(503, with the reason); a program's own failures are verdicts in the :class:`RunResult`.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from rewardhub.errors import Overloaded
from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.pool import SandboxPool, default_pool
from rewardhub.sandbox.settings import SandboxSettings, in_effect
from rewardhub.sandbox.verdicts import RunResult

__all__ = ["MAX_WAITING", "pool_for", "run_program", "run_with_pool"]

T = TypeVar("T")

MAX_WAITING = 256
_runner = ThreadPoolExecutor(max_workers=64, thread_name_prefix="sandbox-run")
_waiting = 0
_waiting_lock = threading.Lock()
_pools: dict[str, SandboxPool] = {}
_pools_lock = threading.Lock()


async def run_program(
    language: str,
    code: str,
    stdin: str = "",
    files: dict[str, str] | None = None,
    limits: Limits | None = None,
    backend: str | None = None,
    test: dict[str, Any] | None = None,
) -> RunResult:
    """Build and run one program once, off the event loop: on ``stdin``, or (Python only) for one
    function-call or assert ``test`` whose value comes back on the private record channel."""
    pool = pool_for(backend)
    with _admitted():
        run = functools.partial(_run, pool, language, code, stdin, files or {}, limits or Limits(), test)
        return await asyncio.get_running_loop().run_in_executor(_runner, run)


async def run_with_pool(backend: str | None, work: Callable[[SandboxPool], T]) -> T:
    """Run ``work(pool)`` off the event loop under the same bound as :func:`run_program`: for callers
    that drive a job themselves (SandboxFusion's ``/run_code`` compiles, runs and fetches files)."""
    pool = pool_for(backend)
    with _admitted():
        return await asyncio.get_running_loop().run_in_executor(_runner, work, pool)


def _run(
    pool: SandboxPool,
    language: str,
    code: str,
    stdin: str,
    files: dict[str, str],
    limits: Limits,
    test: dict[str, Any] | None,
) -> RunResult:
    with pool.job(language, code) as job:
        failed_build = job.setup(files)
        return failed_build or job.run(stdin, limits, test, last=True)


def pool_for(backend: str | None) -> SandboxPool:
    """The process's pool; a service configured for another backend than the environment gets its own."""
    if backend is None or backend == _default_backend():
        return default_pool()
    with _pools_lock:
        if backend not in _pools:
            pool = _pools[backend] = SandboxPool(_default_settings().model_copy(update={"backend": backend}))
            atexit.register(pool.close)
        return _pools[backend]


@contextmanager
def _admitted() -> Iterator[None]:
    global _waiting
    with _waiting_lock:
        if _waiting >= MAX_WAITING:
            raise Overloaded(f"{_waiting} sandbox runs are already waiting", retry_after=1.0)
        _waiting += 1
    try:
        yield
    finally:
        with _waiting_lock:
            _waiting -= 1


def _default_backend() -> str:
    """The backend of this process's default pool (:func:`~rewardhub.sandbox.pool.default_pool`)."""
    return _default_settings().backend


def _default_settings() -> SandboxSettings:
    """The sandbox section of the settings this process was handed (or its environment's)."""
    return in_effect()
