"""Warming the worker pools' fork server: every loaded verifier warms up, then the heap is frozen.

A worker process is forked from a fork server that has already imported the installed
verifiers' modules (:func:`rewardhub.execution.pool.fork_server_modules`); the last module it
imports, :mod:`rewardhub.execution.fork_server_warm`, calls :func:`warm_fork_server`, which

1. calls :meth:`~rewardhub.verifier.Verifier.warm_up` on every verifier class loaded so far. The
   math verifier's first samples otherwise pay about half a second of lazy imports (sympy's
   tensor and matrix modules) and parser tables (antlr's DFA), once in *every* worker, and again
   in every worker that replaces a killed one; built here, before the fork, they are inherited;
2. moves everything allocated so far into the garbage collector's permanent generation
   (``gc.freeze``), so a worker's collections neither walk the shared heap nor touch its pages
   (which would copy them, page by page, into each worker).

A verifier whose warm-up fails, or takes longer than ``WARM_UP_LIMIT_S`` (a ``SIGALRM`` in the
fork server's main thread), is logged and skipped: it then warms lazily in each worker, as it
would without this. Nothing here may raise or hang, or the fork server would not start.
"""

from __future__ import annotations

import gc
import logging
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rewardhub.registry import Registry
from rewardhub.types import VerifierKind
from rewardhub.verifier import Verifier

__all__ = ["warm_fork_server", "warm_loaded_verifiers", "warm_worker"]

log = logging.getLogger(__name__)

WARM_UP_LIMIT_S = 30.0


class _WarmUpTooLong(Exception):
    pass


def warm_fork_server() -> None:
    warm_loaded_verifiers()
    gc.freeze()


def warm_loaded_verifiers() -> list[str]:
    """Warm every verifier class imported so far; returns the names of those that warmed."""
    warmed = []
    for cls in _verifier_classes():
        if cls.warm_up.__func__ is Verifier.warm_up.__func__:  # type: ignore[attr-defined]
            continue
        started = time.perf_counter()
        try:
            with _time_limit(WARM_UP_LIMIT_S):
                cls.warm_up()
        except Exception:  # noqa: BLE001 - a failed warm-up only means it warms lazily in each worker
            log.warning("warming verifier %r failed; it warms in each worker instead", cls.name, exc_info=True)
            continue
        log.debug("warmed %r in %.0f ms", cls.name, (time.perf_counter() - started) * 1000)
        warmed.append(cls.name)
    return warmed


def warm_worker(registry: Registry, kinds: Sequence[VerifierKind]) -> list[str]:
    """In a freshly started worker: :meth:`~rewardhub.verifier.Verifier.warm_worker` of every
    installed verifier of ``kinds``; returns the names of those that warmed.

    What a verifier builds here belongs to this one process (the code verifier's warm sandbox), so
    it cannot be built in the fork server. A failure is logged and skipped: the verifier then
    builds it on its first call, as it would without this, and the worker serves either way.
    """
    warmed = []
    for name in registry.names():
        cls = registry.verifier_class(name)
        if cls.kind not in kinds or cls.warm_worker.__func__ is Verifier.warm_worker.__func__:  # type: ignore[attr-defined]
            continue
        try:
            cls.warm_worker()
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first call builds it
            log.warning("warming verifier %r in a worker failed; its first call does it", name, exc_info=True)
            continue
        warmed.append(name)
    return warmed


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread only; elsewhere, no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _WarmUpTooLong(f"warm-up took longer than {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    pending, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if pending:  # someone else's alarm was set: it goes on, less the time spent here
            signal.setitimer(signal.ITIMER_REAL, max(0.001, pending - (time.monotonic() - started)), interval)


def _verifier_classes() -> list[type[Verifier]]:
    found, stack = [], list(Verifier.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "name", None):
            found.append(cls)
    return sorted(found, key=lambda cls: cls.name)
