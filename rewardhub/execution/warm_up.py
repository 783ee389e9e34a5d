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

A verifier whose warm-up fails is logged and skipped: it then warms lazily in each worker, as it
would without this. Nothing here may raise, or the fork server would not start.
"""

from __future__ import annotations

import gc
import logging
import time

from rewardhub.verifier import Verifier

__all__ = ["warm_fork_server", "warm_loaded_verifiers"]

log = logging.getLogger(__name__)


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
            cls.warm_up()
        except Exception:  # noqa: BLE001 - a failed warm-up only means it warms lazily in each worker
            log.warning("warming verifier %r failed; it warms in each worker instead", cls.name, exc_info=True)
            continue
        log.debug("warmed %r in %.0f ms", cls.name, (time.perf_counter() - started) * 1000)
        warmed.append(cls.name)
    return warmed


def _verifier_classes() -> list[type[Verifier]]:
    found, stack = [], list(Verifier.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "name", None):
            found.append(cls)
    return sorted(found, key=lambda cls: cls.name)
