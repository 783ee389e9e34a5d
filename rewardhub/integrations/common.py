"""What every adapter needs, written once: where the service is, one client per process, messages
as text, and dataset values as JSON.

Each trainer hands rewards over in its own shapes, but the questions an adapter answers are the
same, and copies of the answers drift (two flatteners once turned the same chat prompt into two
different texts). So every adapter in this package uses these:

- :func:`service_spec` and :func:`verifier_spec`: the service's URL and API key, and the verifier,
  from explicit arguments first, then the environment (``REWARDHUB_URL``, ``REWARDHUB_API_KEY``,
  ``REWARDHUB_VERIFIER``: a verifier name or a JSON VerifierSpec), then defaults. A
  ``REWARDHUB_VERIFIER`` that is not a spec raises, naming the variable, before a request goes out.
- :func:`shared_client` / :func:`shared_async_client`: one client per service and process (and per
  event loop for the async one), safe to call from many threads: trainers call reward functions
  concurrently, and a connection pool per call would cost a TCP handshake per sample.
- :func:`verifier_label` (from :mod:`rewardhub.types`, shared with the trainer): what a spec is
  called in logs.
- Messages as text and dataset values as JSON (:func:`content_text`, :func:`chat_prompt`,
  :func:`chat_messages`, :func:`as_reference`, :func:`json_fields`) come from
  :mod:`rewardhub.messages`, which the service's compatibility routes read with too; they are
  re-exported here for the adapters.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rewardhub.client import AsyncRewardClient, RewardClient
from rewardhub.messages import (
    TEXT_PART_TYPES,
    as_reference,
    chat_messages,
    chat_prompt,
    content_text,
    json_fields,
    plain,
)
from rewardhub.types import VerifierSpec, verifier_label

__all__ = [
    "API_KEY_ENV",
    "TEXT_PART_TYPES",
    "URL_ENV",
    "VERIFIER_ENV",
    "ServiceSpec",
    "as_reference",
    "chat_messages",
    "chat_prompt",
    "close_shared_clients",
    "content_text",
    "json_fields",
    "parse_verifier",
    "plain",
    "service_spec",
    "shared_async_client",
    "shared_client",
    "verifier_label",
    "verifier_spec",
]

URL_ENV = "REWARDHUB_URL"
API_KEY_ENV = "REWARDHUB_API_KEY"
VERIFIER_ENV = "REWARDHUB_VERIFIER"

_SPEC: TypeAdapter[VerifierSpec] = TypeAdapter(VerifierSpec)


# --- where the service is ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceSpec:
    """The service an adapter talks to: its URL (None: the client's default, ``http://127.0.0.1:8000``) and key."""

    url: str | None
    api_key: str | None


def service_spec(url: str | None = None, api_key: str | None = None) -> ServiceSpec:
    """Explicit arguments, else ``REWARDHUB_URL`` and ``REWARDHUB_API_KEY``, else the defaults.

    Read at each call, not at import: a launcher may set the variables after the adapter is imported.
    """
    return ServiceSpec(
        url=url or os.environ.get(URL_ENV) or None,
        api_key=api_key if api_key is not None else (os.environ.get(API_KEY_ENV) or None),
    )


def verifier_spec(
    verifier: VerifierSpec | Mapping[str, Any] | None = None, default: VerifierSpec | None = None
) -> VerifierSpec | Mapping[str, Any] | None:
    """``verifier`` if given, else ``REWARDHUB_VERIFIER`` (checked by :func:`parse_verifier`), else ``default``."""
    if verifier is not None:
        return verifier
    raw = os.environ.get(VERIFIER_ENV, "").strip()
    return parse_verifier(raw, VERIFIER_ENV) if raw else default


def parse_verifier(raw: str, source: str = VERIFIER_ENV) -> VerifierSpec | dict[str, Any]:
    """A verifier name (``math``) or a JSON spec (``{"name": "math", "config": {...}}``), checked.

    The value is returned as written (a name or the parsed JSON); only its shape is checked here,
    so a mistyped spec fails on the first call with the variable's name, not as a 422 from the
    service (whether the verifier exists and accepts its config, only the service knows).
    """
    value: Any = raw
    if raw[:1] in ("{", '"', "["):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source} is neither a verifier name nor valid JSON ({exc.msg}): {raw!r}") from None
    try:
        _SPEC.validate_python(value)
    except ValidationError:
        raise ValueError(
            f"{source} is not a verifier spec: {raw!r}; expected a name, "
            '{"name": ..., "config": {...}}, {"sum": [...]} or {"gate": ..., "then": ...}'
        ) from None
    return value


# --- one client per service and process -------------------------------------------------------------

_lock = threading.Lock()
_sync_clients: dict[tuple[str | None, str | None], RewardClient] = {}
_async_clients: dict[tuple[asyncio.AbstractEventLoop, str | None, str | None], AsyncRewardClient] = {}


def _forget_after_fork() -> None:
    """In a forked child: a client inherited across ``fork`` shares its sockets with the parent, and
    the lock may have been held by a parent thread at the fork. Start afresh (Ray, multiprocessing)."""
    global _lock
    _lock = threading.Lock()
    _sync_clients.clear()
    _async_clients.clear()


if hasattr(os, "register_at_fork"):  # no fork, nothing to forget (Windows)
    os.register_at_fork(after_in_child=_forget_after_fork)


def shared_client(service: ServiceSpec) -> RewardClient:
    """The process's client for ``service``; created on first use, then reused by every thread."""
    key = (service.url, service.api_key)
    with _lock:
        client = _sync_clients.get(key)
        if client is None:
            client = _sync_clients[key] = RewardClient(service.url, api_key=service.api_key)
        return client


def shared_async_client(service: ServiceSpec) -> AsyncRewardClient:
    """The running event loop's client for ``service`` (an async client cannot change loops).

    Clients of loops that have closed since are dropped here, so a trainer that runs each batch
    in a fresh ``asyncio.run`` does not accumulate them.
    """
    loop = asyncio.get_running_loop()
    key = (loop, service.url, service.api_key)
    with _lock:
        for stale in [k for k in _async_clients if k[0].is_closed()]:
            del _async_clients[stale]
        client = _async_clients.get(key)
        if client is None:
            client = _async_clients[key] = AsyncRewardClient(service.url, api_key=service.api_key)
        return client


def close_shared_clients() -> None:
    """Close the sync clients and forget every client (async ones belong to their loops)."""
    with _lock:
        sync = list(_sync_clients.values())
        _sync_clients.clear()
        _async_clients.clear()
    for client in sync:
        client.close()
