"""NeMo-Gym's verify request, read as a rewardhub sample.

A NeMo-Gym resources server's ``/verify`` gets ``{"responses_create_params", "response", ...task
fields}``: the OpenAI Responses-API request that produced the rollout, the Responses-API answer
(its ``output`` a list of typed items), and whatever the task row carried (``expected_answer``,
IFEval's ``instruction_id_list`` and ``kwargs``, an ``expected_call``...). This module turns that
into one :class:`~rewardhub.types.Sample`:

- the conversation is OpenAI chat messages: ``instructions`` and the request's ``input`` first
  (a string is one user turn), then the ``output`` items in order. ``message`` items are assistant
  turns (their ``output_text`` parts joined, a refusal as its text); ``reasoning`` items become the
  next assistant turn's ``reasoning_content`` (never part of its answer text); consecutive
  ``function_call`` items are one assistant turn's ``tool_calls`` (arguments kept as the string the
  model wrote, so malformed JSON is the verifier's zero, not the caller's error), and
  ``function_call_output`` items are ``tool`` turns. The response is the last assistant turn's text.
- the reference comes from the task fields, first match wins: ``reference`` (explicit),
  ``expected_answer``, IFEval's ``instruction_id_list`` + ``kwargs`` (top level or in
  ``verifier_metadata``, as NeMo-Gym's own instruction-following server reads them),
  ``expected_call``.

For a NeMo-Gym server rewardhub stands in for (:mod:`.servers`), :func:`to_sample` reads the
request as that server does instead: the output alone, as one assistant turn (:func:`output_turn`),
with the server's verifier, config and reference.

Not covered: items that carry no text or function call (web search, computer use, MCP, shell,
image generation) are skipped and named in the sample's metadata, since no rewardhub verifier
reads them; image, audio and file input parts are refused (422) like any non-text content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardhub.errors import InvalidRequest
from rewardhub.types import Sample

from .servers import TEXT_READINGS, Server

__all__ = ["NemoGymVerifyRequest", "ResponseItems", "output_turn", "reference_of", "to_messages", "to_sample"]

PROTOCOL_FIELDS = frozenset({"responses_create_params", "response", "verifier", "_ng_rollout_id"})
"""Keys of the verify body that are not the task's own fields."""

_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


class _Responses(BaseModel):
    """The part of a Responses-API ``response`` that is read: its ``output`` items."""

    model_config = ConfigDict(extra="allow")

    output: list[dict[str, Any]]


class _CreateParams(BaseModel):
    """The part of ``responses_create_params`` that is read: ``input`` and ``instructions``."""

    model_config = ConfigDict(extra="allow")

    input: str | list[dict[str, Any]]
    instructions: str | None = None


class NemoGymVerifyRequest(BaseModel):
    """NeMo-Gym's ``BaseVerifyRequest`` plus the task's fields.

    Extra keys are allowed on purpose: a NeMo-Gym task row carries fields of its own choosing
    (``expected_answer``, ``options``, ``verifier_metadata``...), and the answer echoes them back.
    ``verifier`` (a rewardhub verifier spec) overrides the verifier named in the path, for configs
    and composites.
    """

    model_config = ConfigDict(extra="allow")

    responses_create_params: _CreateParams
    response: _Responses
    verifier: Any = Field(None, description="A rewardhub verifier spec; overrides the path's verifier.")


@dataclass
class ResponseItems:
    """Chat messages being built from Responses-API items, one item at a time."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)

    def add(self, item: dict[str, Any], where: str) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            self._message(item, where)
        elif kind == "reasoning":
            self._reasoning.append(_reasoning_text(item))
        elif kind == "function_call":
            self._function_call(item, where)
        elif kind == "function_call_output":
            self._call_output(item, where)
        elif isinstance(kind, str):
            self.skipped.append(kind)
        else:
            raise InvalidRequest(f"{where} has no 'type'")

    def _message(self, item: dict[str, Any], where: str) -> None:
        role = item.get("role", "assistant")
        turn: dict[str, Any] = {"role": role, "content": _content_text(item.get("content"), where)}
        if role == "assistant":
            self._attach_reasoning(turn)
        self.messages.append(turn)

    def _function_call(self, item: dict[str, Any], where: str) -> None:
        call = _call(item, where)
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant" and not self._reasoning:
            last.setdefault("tool_calls", []).append(call)
            return
        turn: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [call]}
        self._attach_reasoning(turn)
        self.messages.append(turn)

    def _call_output(self, item: dict[str, Any], where: str) -> None:
        output = item.get("output", "")
        text = output if isinstance(output, str) else _content_text(output, where)
        self.messages.append({"role": "tool", "content": text, "tool_call_id": item.get("call_id")})

    def _attach_reasoning(self, turn: dict[str, Any]) -> None:
        if self._reasoning:
            turn["reasoning_content"] = "\n".join(self._reasoning)
            self._reasoning = []

    def finish(self) -> list[dict[str, Any]]:
        """The chat messages (reasoning with no turn after it is dropped: it answers nothing)."""
        return self.messages


def to_messages(params: _CreateParams, output: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The whole rollout as OpenAI chat messages, and the output item types that were skipped."""
    items = ResponseItems()
    if params.instructions:
        items.messages.append({"role": "system", "content": params.instructions})
    if isinstance(params.input, str):
        items.messages.append({"role": "user", "content": params.input})
    else:
        for index, item in enumerate(params.input):
            items.add(item, f"responses_create_params.input[{index}]")
    for index, item in enumerate(output):
        items.add(item, f"response.output[{index}]")
    return items.finish(), items.skipped


def reference_of(task: dict[str, Any]) -> Any:
    """The verifier's ground truth, read from the task's own fields (see the module docstring)."""
    if "reference" in task:
        return task["reference"]
    if "expected_answer" in task:
        return task["expected_answer"]
    metadata = task.get("verifier_metadata") if isinstance(task.get("verifier_metadata"), dict) else {}
    fields = {**{k: task[k] for k in ("instruction_id_list", "kwargs") if k in task}, **metadata}
    if "instruction_id_list" in fields:
        return {"instruction_id_list": fields["instruction_id_list"], "kwargs": fields.get("kwargs")}
    if "expected_call" in task:
        return task["expected_call"]
    return None


def to_sample(body: NemoGymVerifyRequest, server: Server | None = None) -> Sample:
    """One sample for the score pipeline; a conversation that is not one is a 422.

    Without ``server``, the rollout is the conversation and the reference comes from the task's
    fields (see the module docstring); with one, the output is read as that NeMo-Gym server reads
    it (:mod:`.servers`), and the sample names the server's verifier.
    """
    task = {k: v for k, v in (body.model_extra or {}).items() if k not in PROTOCOL_FIELDS}
    if server is not None:
        # A server reads the output alone, so the input is not read (a screenshot may be in it).
        turn, skipped = output_turn(body.response.output, server.text)
        if server.text_of is not None:
            turn["content"] = server.text_of(body.response.output, task)
        messages = [turn]
        fields: dict[str, Any] = {"reference": server.reference(task), "verifier": server.spec(task)}
    else:
        messages, skipped = to_messages(body.responses_create_params, body.response.output)
        fields = {"reference": reference_of(task)}
    if not any(m["role"] == "assistant" for m in messages):
        # A rollout that produced no assistant output (an empty output list) still gets a reward:
        # the empty answer, as NeMo-Gym's own servers read it.
        messages.append({"role": "assistant", "content": ""})
    metadata = {"nemo_gym": {"skipped_items": skipped}} if skipped else {}
    try:
        return Sample(messages=messages, metadata=metadata, **fields)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        raise InvalidRequest("the rollout is not a conversation rewardhub can score", detail=errors[:20]) from None


def output_turn(output: list[dict[str, Any]], reading: str) -> tuple[dict[str, Any], list[str]]:
    """The whole output as one assistant turn, as a resources server judges it: the text the server
    reads (:data:`~.servers.TEXT_READINGS`) and every ``function_call`` item as its calls, in order.

    Tool results and the turn boundaries between calls are dropped: the servers that judge calls
    count every call the output made. Item types that are neither are named, as in :func:`to_sample`.
    """
    calls, reasoning, skipped = [], [], []
    for index, item in enumerate(output):
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "function_call":
            calls.append(_call(item, f"response.output[{index}]"))
        elif kind == "reasoning":
            reasoning.append(_reasoning_text(item))
        elif kind not in ("message", "function_call_output"):
            if not isinstance(kind, str):
                raise InvalidRequest(f"response.output[{index}] has no 'type'")
            skipped.append(kind)
    turn: dict[str, Any] = {"role": "assistant", "content": TEXT_READINGS[reading](output)}
    if calls:
        turn["tool_calls"] = calls
    if reasoning:
        turn["reasoning_content"] = "\n".join(reasoning)
    return turn, skipped


def _call(item: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``function_call`` item as an OpenAI tool call (arguments kept as the model wrote them)."""
    name, call_id = item.get("name"), item.get("call_id") or item.get("id")
    if not isinstance(name, str) or not name:
        raise InvalidRequest(f"{where} is a function_call without a name")
    arguments = item.get("arguments", "{}")
    if not isinstance(arguments, str | dict):
        raise InvalidRequest(f"{where}.arguments must be a string (or an object)")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _content_text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content must be text or a list of content parts")
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise InvalidRequest(f"{where} holds a content part of type {kind!r}: only text parts can be scored")
    return "".join(texts)


def _reasoning_text(item: dict[str, Any]) -> str:
    parts = [*(item.get("content") or []), *(item.get("summary") or [])]
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
