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
- :func:`content_text` / :func:`chat_prompt`: a chat message's content as text, with one rule for
  lists of parts (below). :func:`chat_messages`: a trainer's conversation (a trajectory with
  ``tool_calls`` and tool results) as the sample's ``messages``, the same rule for content.
- :func:`verifier_label` (from :mod:`rewardhub.types`, shared with the trainer): what a spec is
  called in logs. :func:`as_reference` and :func:`json_fields`: dataset labels and metadata as JSON.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rewardhub.client import AsyncRewardClient, RewardClient
from rewardhub.types import ChatMessage, VerifierSpec, verifier_label

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

TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
"""Content parts that carry text: chat completions' ``text``, the Responses API's ``input_text`` and
``output_text``. A part without a ``type`` counts as text; images, audio and files do not."""

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


# --- messages as text -------------------------------------------------------------------------------


def content_text(content: Any) -> str:
    """One message's content as text: the one rule every adapter (and the graders) follows.

    A string is itself; None is empty; a list of parts is the concatenation, in order, of its
    string parts and of the ``text`` of its text parts (:data:`TEXT_PART_TYPES`, or no ``type``),
    with nothing between them, as chat templates render consecutive text parts. Images, audio and
    files contribute nothing: a text verifier cannot read them.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return _part_text(content)
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        return "".join(_part_text(part) for part in content)
    return str(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        if (part.get("type") or "text") not in TEXT_PART_TYPES:
            return ""
        text = part.get("text")
        return "" if text is None else str(text)
    return str(part)


def chat_prompt(prompt: Any) -> str | list[ChatMessage] | None:
    """A trainer's prompt in the wire's shape: text as it is, chat messages with their content as text.

    A list must hold ``{"role", "content"}`` messages (a missing role is ``user``); anything else
    in it raises, rather than being dropped from what the verifier sees.
    """
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Mapping):
        prompt = [prompt]
    if not isinstance(prompt, Sequence):
        return str(prompt)
    messages = []
    for index, message in enumerate(prompt):
        if not isinstance(message, Mapping):
            raise ValueError(f"chat prompt item {index} is a {type(message).__name__}, not a {{role, content}} message")
        messages.append(
            ChatMessage(role=str(message.get("role") or "user"), content=content_text(message.get("content")))
        )
    return messages


def chat_messages(messages: Any, default_role: str = "assistant") -> list[ChatMessage]:
    """A trainer's conversation as the wire's messages: roles, text content, tool calls and results kept.

    Each item must be a message mapping (a missing role is ``default_role``: a completion's
    messages are the assistant's). Content follows :func:`content_text`; ``tool_calls`` (with
    arguments as a JSON string or, as chat templates keep them, a dict), ``tool_call_id``,
    ``name`` and ``reasoning_content`` pass through. Anything the wire refuses (an unknown role,
    a call on a user turn) raises ValueError naming the message, before a request goes out.
    """
    messages = plain(messages)  # datasets read from parquet hand over numpy arrays
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list):
        raise ValueError(f"a conversation is a list of messages, not a {type(messages).__name__}")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {index} is a {type(message).__name__}, not a {{role, content}} message")
        fields = {key: plain(message[key]) for key in _MESSAGE_FIELDS if message.get(key) is not None}
        if isinstance(fields.get("tool_calls"), list):
            fields["tool_calls"] = [_tool_call(call) for call in fields["tool_calls"]]
        fields["role"] = str(message.get("role") or default_role)
        fields["content"] = content_text(message.get("content"))
        try:
            out.append(ChatMessage.model_validate(fields))
        except ValidationError as exc:
            raise ValueError(f"message {index}: {exc.errors()[0]['msg']}") from None
    return out


_MESSAGE_FIELDS = ("tool_calls", "tool_call_id", "name", "reasoning_content")


def _tool_call(call: Any) -> Any:
    """A call's id, type and function, without what servers add beside them (a stream's ``index``)."""
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call  # the wire says what is wrong with it
    function = {key: call["function"][key] for key in ("name", "arguments") if key in call["function"]}
    return {"id": call.get("id"), "type": call.get("type") or "function", "function": function}


# --- dataset values as JSON -------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A dataset value as plain Python: datasets read from parquet hand over numpy arrays and scalars."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def as_reference(label: Any) -> Any:
    """A dataset's label (gold answer, tests, rubric) as the sample's JSON ``reference``.

    A NaN label is a missing one (how pandas and parquet spell it): None, which the verifier
    reports as a sample it cannot judge. Raises ValueError, naming the type, for a label JSON
    cannot carry: the request would fail later with less to go on.
    """
    value = plain(label)
    if isinstance(value, float) and math.isnan(value):
        return None
    if not _jsonable(value):
        raise ValueError(f"a reference of type {type(label).__name__} cannot be sent as JSON")
    return value


def json_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``fields`` that JSON can carry, as plain values (for a sample's metadata).

    Metadata is context, not the thing judged, so an entry JSON cannot carry is left out.
    """
    out = {}
    for key, value in fields.items():
        value = plain(value)
        if _jsonable(value):
            out[str(key)] = value
    return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True
