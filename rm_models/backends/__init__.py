"""Model backends behind one interface, loaded once per process.

``get_backend(spec)`` returns the process's one backend for that model and options, creating it
on first use; the model weights themselves load lazily on the first operation that needs them.
Verifier instances are shared per process too, so two configs naming the same model share it.
"""

from __future__ import annotations

import threading

from ..config import BackendSpec
from .base import Backend, ChatReply, ChatRequest, TokenAlternatives

__all__ = [
    "Backend",
    "ChatReply",
    "ChatRequest",
    "TokenAlternatives",
    "clear_backends",
    "get_backend",
]

_cache: dict[BackendSpec, Backend] = {}
_lock = threading.Lock()


def get_backend(spec: BackendSpec) -> Backend:
    """The shared backend for ``spec`` (a frozen dataclass, so equal specs share one model)."""
    backend = _cache.get(spec)
    if backend is None:
        with _lock:
            backend = _cache.get(spec)
            if backend is None:
                backend = _cache[spec] = _build(spec)
    return backend


def clear_backends() -> None:
    """Close and forget every loaded backend (tests; a long-lived process never needs it).

    Closing matters for vLLM: its engine runs in processes of its own whose workers poll for work
    while idle, so a forgotten engine keeps a share of a core busy until this process exits."""
    with _lock:
        backends = list(_cache.values())
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
