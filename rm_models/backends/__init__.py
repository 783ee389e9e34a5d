"""Model backends behind one interface, loaded once per process, at most ``models.max_loaded`` at a time.

``using_backend(spec)`` lends the process's one backend for that model and options for the length
of a batch, creating it on first use; the model weights themselves load lazily on the first
operation that needs them. Verifier instances are shared per process too, so two configs naming
the same model share it.

Why a bound: a process that scores for a trainer may be asked for a new model every step (PRIME's
implicit PRM reads the policy of each step from a new folder, ``$policy``), and without one it kept
every step's 540 MB copy of SmolLM2 until it ran out of memory. Past the bound the least recently
used backend leaves the cache and is closed (its engine processes shut down, its weights freed with
the last reference); one lent to a batch that is still running is closed when that batch ends.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rewardhub.settings import current

from ..config import BackendSpec
from .base import Backend, ChatReply, ChatRequest, TokenAlternatives

__all__ = [
    "Backend",
    "ChatReply",
    "ChatRequest",
    "TokenAlternatives",
    "clear_backends",
    "get_backend",
    "using_backend",
]


@dataclass
class _Loaded:
    backend: Backend
    users: int = 0  # batches it is lent to now
    evicted: bool = False  # out of the cache: closed when its last batch ends
    closed: bool = False

    def to_close(self) -> bool:
        """Whether the caller should close it now: evicted, idle and not yet closed (under ``_lock``)."""
        close = self.evicted and self.users == 0 and not self.closed
        self.closed = self.closed or close
        return close


_cache: OrderedDict[BackendSpec, _Loaded] = OrderedDict()  # least recently used first
_lock = threading.Lock()


@contextmanager
def using_backend(spec: BackendSpec) -> Iterator[Backend]:
    """The shared backend for ``spec`` (a frozen dataclass, so equal specs share one model), lent
    for the block: the bound on loaded models never closes it while the block runs."""
    with _lock:
        loaded, evicted = _lookup(spec)
        loaded.users += 1
    _close(evicted)
    try:
        yield loaded.backend
    finally:
        with _lock:
            loaded.users -= 1
            last = loaded.to_close()
        if last:
            loaded.backend.close()


def get_backend(spec: BackendSpec) -> Backend:
    """The shared backend for ``spec``, not lent: for a caller that uses it at once (a test, a
    script). A verifier scores through :func:`using_backend`."""
    with _lock:
        loaded, evicted = _lookup(spec)
    _close(evicted)
    return loaded.backend


def _lookup(spec: BackendSpec) -> tuple[_Loaded, list[_Loaded]]:
    """The cache's entry for ``spec``, now the most recently used, and the entries it pushed out
    (under ``_lock``; building a backend loads nothing yet, so it is quick)."""
    loaded = _cache.get(spec)
    if loaded is None:
        loaded = _cache[spec] = _Loaded(_build(spec))
    _cache.move_to_end(spec)
    evicted = []
    while len(_cache) > current().models.max_loaded:  # at least 1: the entry just used stays
        _, oldest = _cache.popitem(last=False)
        oldest.evicted = True
        evicted.append(oldest)
    return loaded, evicted


def _close(evicted: list[_Loaded]) -> None:
    """Close each evicted backend that no batch is using (the others close when their batch ends)."""
    for loaded in evicted:
        with _lock:
            idle = loaded.to_close()
        if idle:
            loaded.backend.close()


def clear_backends() -> None:
    """Close and forget every loaded backend (tests; a long-lived process never needs it).

    Closing matters for vLLM: its engine runs in processes of its own whose workers poll for work
    while idle, so a forgotten engine keeps a share of a core busy until this process exits."""
    with _lock:
        backends = [loaded.backend for loaded in _cache.values()]
        _cache.clear()
    for backend in backends:
        backend.close()


def _build(spec: BackendSpec) -> Backend:
    if spec.backend == "transformers":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(spec)
    if spec.backend == "vllm":
        from .vllm_backend import VLLMBackend

        return VLLMBackend(spec)
    if spec.backend == "openai":
        from .openai_http import OpenAIBackend

        return OpenAIBackend(spec)
    raise ValueError(f"unknown backend {spec.backend!r}")
