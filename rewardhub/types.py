"""The one vocabulary every part of rewardhub speaks.

A *sample* is what gets scored, a *result* is what comes back, and a *verifier spec* says which
verifier (or which combination of verifiers) does the scoring. These are the same shapes the HTTP
contract (API.md) uses, so a sample travels unchanged from the trainer to the worker and back.

This module imports nothing of ours: everything else imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

__all__ = [
    "ERROR",
    "OK",
    "TIMEOUT",
    "STATUSES",
    "ROLES",
    "ChatMessage",
    "Gate",
    "Result",
    "Role",
    "Sample",
    "Status",
    "ToolCall",
    "ToolFunction",
    "VerifierKind",
    "VerifierRef",
    "VerifierSpec",
    "WeightedSum",
    "WeightedTerm",
    "check_conversation",
    "verifier_label",
]

Status = Literal["ok", "timeout", "error"]
"""Outcome of scoring one sample. Anything but ``ok`` means "no judgement": mask it, never train on it."""

OK: Status = "ok"
TIMEOUT: Status = "timeout"
ERROR: Status = "error"
STATUSES: tuple[Status, ...] = (OK, TIMEOUT, ERROR)

VerifierKind = Literal["rule", "code", "model", "judge", "group"]
"""Where a verifier's work runs: ``rule`` on the CPU pool, ``code`` in the sandbox, ``model`` and
``judge`` on model backends, ``group`` over all samples of one group after the others."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Role = Literal["system", "developer", "user", "assistant", "tool"]
"""The roles of OpenAI's chat format that a conversation may carry (``developer`` is the newer ``system``)."""

ROLES: tuple[Role, ...] = ("system", "developer", "user", "assistant", "tool")

_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


class ToolFunction(_Wire):
    """The function half of an OpenAI tool call.

    ``arguments`` is what the model wrote: OpenAI sends a JSON string, chat templates (TRL,
    transformers, verl) keep a dict. A string that is not JSON is still carried, not refused:
    malformed arguments are the policy's mistake, which a verifier scores (0, with the reason),
    not the caller's, which would make the whole request fail.
    """

    name: str = Field(min_length=1)
    arguments: str | dict[str, Any] = "{}"


class ToolCall(_Wire):
    """One call an assistant turn makes: ``{"id", "type": "function", "function": {"name", "arguments"}}``."""

    id: str | None = None
    type: Literal["function"] = "function"
    function: ToolFunction


class ChatMessage(_Wire):
    """One turn of a conversation in OpenAI's chat format.

    ``content`` is text: a list of text parts (``text``, ``input_text``, ``output_text``) is joined,
    None is empty. Other parts (images, audio, files) are refused rather than dropped, because a
    verifier that reads text would judge a conversation it did not see whole. Only an assistant
    turn makes ``tool_calls``; only a ``tool`` turn answers one (``tool_call_id``).
    ``reasoning_content`` is the reasoning some servers return beside the answer; it is not
    part of the answer text.
    """

    role: Role
    content: str = ""
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _content_as_text(cls, content: Any) -> Any:
        if content is None:
            return ""
        if isinstance(content, list):
            return "".join(_part_text(part) for part in content)
        return content

    @model_validator(mode="after")
    def _calls_belong_to_their_roles(self) -> ChatMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only an assistant turn makes tool_calls, not a {self.role} turn")
        if self.tool_call_id is not None and self.role != "tool":
            raise ValueError(f"only a tool turn carries tool_call_id, not a {self.role} turn")
        return self


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and (part.get("type") or "text") in _TEXT_PARTS and isinstance(part.get("text"), str):
        return part["text"]
    kind = part.get("type") if isinstance(part, dict) else type(part).__name__
    raise ValueError(f"a content part of type {kind!r} cannot be scored: only text parts are read")


def check_conversation(turns: list[ChatMessage]) -> None:
    """Raise ValueError unless every tool result answers a call made before it.

    A ``tool`` turn must follow an assistant turn (possibly with other tool results between):
    a result with no call before it is a broken trajectory, not one to score. When the assistant
    turn made structured ``tool_calls``, there are at most as many results as calls, and a
    ``tool_call_id`` must name one of them, once. Calls written in the text (Hermes tags, Python
    syntax) are not counted here: reading them is the verifier's work.
    """
    calls: list[ToolCall] | None = None
    answered: set[str] = set()
    results = 0
    for index, turn in enumerate(turns):
        if turn.role == "assistant":
            calls, answered, results = list(turn.tool_calls or []), set(), 0
            continue
        if turn.role != "tool":
            calls = None
            continue
        if calls is None:
            raise ValueError(f"message {index} is a tool result without an assistant turn that called a tool")
        results += 1
        if calls and results > len(calls):
            raise ValueError(
                f"message {index} is tool result {results} for an assistant turn that made {len(calls)} call(s)"
            )
        if turn.tool_call_id is not None and any(call.id for call in calls):
            ids = {call.id for call in calls}
            if turn.tool_call_id not in ids:
                raise ValueError(f"message {index} answers tool_call_id {turn.tool_call_id!r}, which no call made")
            if turn.tool_call_id in answered:
                raise ValueError(f"message {index} answers tool_call_id {turn.tool_call_id!r} a second time")
            answered.add(turn.tool_call_id)


class VerifierRef(_Wire):
    """A registered verifier by name, with an optional config (validated by the verifier)."""

    name: str
    config: dict[str, Any] = Field(default_factory=dict)


class WeightedTerm(_Wire):
    verifier: VerifierSpec
    weight: float = 1.0


class WeightedSum(_Wire):
    """``{"sum": [{"verifier": ..., "weight": w}, ...]}``: the weighted sum of the terms' scores."""

    sum: list[WeightedTerm] = Field(min_length=1)
    clip: tuple[float, float] | None = None
    scale: float = 1.0


class Gate(_Wire):
    """``{"gate": format, "then": math}``: ``then``'s score, or ``otherwise`` unless the gate passes.

    The gate passes when its score reaches ``threshold``. A gate that could not judge (timeout,
    error) makes the whole result a non-``ok`` status: no judgement is not the same as failure.
    """

    gate: VerifierSpec
    then: VerifierSpec
    threshold: float = 1.0
    otherwise: float = 0.0


VerifierSpec = str | VerifierRef | WeightedSum | Gate
"""``"math"``, ``{"name": "math", "config": {...}}``, a weighted sum, or a gate."""

WeightedTerm.model_rebuild()
WeightedSum.model_rebuild()
Gate.model_rebuild()


def verifier_label(spec: VerifierSpec | Mapping[str, Any] | None) -> str:
    """A short name for a verifier spec, for metric names and logs.

    A verifier's registered name (``"math"``, ``{"name": "math", ...}``); ``sum`` or ``gate`` for a
    composition; ``default`` for no spec (the service's default verifier decides). One function,
    so that a trainer and every adapter name the same spec the same way.
    """
    if spec is None:
        return "default"
    if isinstance(spec, str):
        return spec
    if isinstance(spec, VerifierRef):
        return spec.name
    if isinstance(spec, WeightedSum):
        return "sum"
    if isinstance(spec, Gate):
        return "gate"
    if isinstance(spec, Mapping):
        if "name" in spec:
            return str(spec["name"])
        for key in ("sum", "gate"):
            if key in spec:
                return key
    return "composite"


class Sample(_Wire):
    """One thing to score. ``reference`` is the verifier's ground truth (a gold answer, tests, a
    rubric); ``group`` ties together the samples drawn for one prompt.

    A sample carries a ``response`` (text), or ``messages`` (a conversation in OpenAI's chat
    format: a multi-turn, tool-calling trajectory), or both. Without ``response``, it is the last
    assistant turn's text, so a verifier that reads text needs to know nothing of conversations.
    ``messages`` holding a system, developer or user turn is the whole conversation; holding only
    assistant and tool turns, it is what followed ``prompt`` (see :meth:`conversation`).
    ``session_id`` names a live session of the caller's: the ``code`` verifier then runs its tests
    inside that session's files and state (never cached: the session changes).
    """

    id: str | None = None
    prompt: str | list[ChatMessage] | None = None
    response: str
    messages: list[ChatMessage] | None = None
    reference: Any = None
    verifier: VerifierSpec | None = None
    group: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _response_from_messages(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("response") is not None:
            return data
        if data.get("messages") is None:
            raise ValueError("a sample needs a response, or messages with an assistant turn")
        try:
            messages = _MESSAGES.validate_python(data["messages"])
        except ValidationError:
            return {**data, "response": ""}  # pydantic reports the messages' own errors, where they are
        final = _last_assistant(messages)
        if final is None:
            raise ValueError("messages hold no assistant turn, and there is no response to score")
        return {**data, "messages": messages, "response": final.content}

    @model_validator(mode="after")
    def _tool_results_answer_calls(self) -> Sample:
        if self.messages is not None:
            check_conversation(self.conversation())
        return self

    def prompt_text(self) -> str:
        """The prompt as plain text (chat messages joined), for verifiers that only read text."""
        if self.prompt is None:
            return ""
        if isinstance(self.prompt, str):
            return self.prompt
        return "\n".join(message.content for message in self.prompt)

    def conversation(self) -> list[ChatMessage]:
        """The whole conversation: prompt turns, then what the model did.

        ``messages`` that hold a system, developer or user turn are the whole conversation
        already; otherwise they follow the prompt (a text prompt is one user turn). A sample
        without ``messages`` is the prompt followed by one assistant turn, its ``response``.
        """
        if self.messages is not None and any(m.role in ("system", "developer", "user") for m in self.messages):
            return list(self.messages)
        if self.prompt is None:
            head: list[ChatMessage] = []
        elif isinstance(self.prompt, str):
            head = [ChatMessage(role="user", content=self.prompt)]
        else:
            head = list(self.prompt)
        tail = self.messages if self.messages is not None else [ChatMessage(role="assistant", content=self.response)]
        return head + list(tail)

    def final_turn(self) -> ChatMessage:
        """The last assistant turn: where the final answer and the last tool calls are read.

        With ``response`` given beside ``messages``, the response is the final text, and the last
        assistant turn of ``messages`` still carries the structured calls.
        """
        last = _last_assistant(self.messages or [])
        if last is None:
            return ChatMessage(role="assistant", content=self.response)
        if last.content == self.response:
            return last
        return last.model_copy(update={"content": self.response})

    def assistant_turns(self) -> list[ChatMessage]:
        """Every assistant turn, in order (one, the response, for a sample without ``messages``)."""
        turns = [m for m in self.messages or [] if m.role == "assistant"]
        return turns or [ChatMessage(role="assistant", content=self.response)]


_MESSAGES: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])


def _last_assistant(messages: list[ChatMessage]) -> ChatMessage | None:
    return next((m for m in reversed(messages) if m.role == "assistant"), None)


class Result(_Wire):
    """The judgement of one sample.

    ``status`` other than ``ok`` comes with the verifier's failure score and an ``error`` message:
    a crash or a timeout is never silently turned into a reward of 0.
    """

    id: str | None = None
    score: float
    status: Status = OK
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    steps: list[float] | None = None
    elapsed_ms: float = 0.0
    cached: bool = False  # served from the reward cache (or from an identical sample of the request), not judged again

    @classmethod
    def ok(cls, score: float, steps: list[float] | None = None, **details: Any) -> Result:
        return cls(score=float(score), steps=steps, details=details)

    @classmethod
    def failed(cls, message: str, status: Status = ERROR, score: float = 0.0, **details: Any) -> Result:
        return cls(score=score, status=status, error=message, details=details)
