"""Trainers' chat messages and dataset values, read into the vocabulary of :mod:`rewardhub.types`.

Both sides of a foreign protocol read them: the adapters a trainer imports
(:mod:`rewardhub.integrations`) and the routes that answer a trainer's own protocol
(:mod:`rewardhub.api.compat`). One copy, because copies drift (two flatteners once turned the same
chat prompt into two different texts).

- :func:`content_text` / :func:`chat_prompt`: a chat message's content as text, with one rule for
  lists of parts. :func:`chat_messages`: a trainer's conversation (a trajectory with
  ``tool_calls`` and tool results) as the sample's ``messages``, the same rule for content.
- :func:`plain`, :func:`as_reference` and :func:`json_fields`: dataset labels and metadata as JSON.
- :func:`observation`: a session call's answer as the model reads it, for every tool protocol
  (TRL's tool function, verl's ``BaseTool``, ORS's served environment).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from rewardhub.types import ChatMessage

__all__ = [
    "TEXT_PART_TYPES",
    "as_reference",
    "chat_messages",
    "chat_prompt",
    "content_text",
    "json_fields",
    "observation",
    "plain",
]

TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
"""Content parts that carry text: chat completions' ``text``, the Responses API's ``input_text`` and
``output_text``. A part without a ``type`` counts as text; images, audio and files do not."""


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


# --- tool results as text ---------------------------------------------------------------------------


def observation(answer: Mapping[str, Any]) -> str:
    """A session call's answer as the model reads it: stdout, then stderr, then the verdict if it is not ok."""
    parts = [answer.get("stdout") or "", answer.get("stderr") or ""]
    text = "".join(part if part.endswith("\n") or not part else part + "\n" for part in parts)
    status = answer.get("status")
    if status != "ok":
        text += f"[{status}{', exit code ' + str(answer['exit_code']) if answer.get('exit_code') is not None else ''}]"
        if answer.get("state") == "lost":
            text += " [the interpreter restarted: variables are gone, files are kept]"
    return text
