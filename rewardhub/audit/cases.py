"""What an audit reads: labelled cases and exploits, as pydantic models that refuse unknown fields.

A labelled case is a response (or an OpenAI chat transcript) with its reference and the verdict a
careful human gave it: ``expected`` is a bool ("this response is right") or a number (the score it
should get; it counts as right at or above the audit's threshold). An exploit is a response written
to be rewarded without being right, with the reference it attacks and what inspired it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, model_validator

from rewardhub.types import ChatMessage, Sample

__all__ = ["AuditCase", "Exploit", "transcript_text"]


class _Edge(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuditCase(_Edge):
    """One labelled case: ``response`` or ``messages``, ``reference``, ``expected``."""

    id: str | None = None
    prompt: str | list[ChatMessage] | None = None
    response: str | None = None
    messages: list[dict[str, Any]] | None = Field(
        None, description="OpenAI chat messages; the last assistant turn's text (and tool calls) is what is scored."
    )
    reference: Any = None
    expected: StrictBool | StrictInt | StrictFloat
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_response(self) -> AuditCase:
        if (self.response is None) == (self.messages is None):
            raise ValueError("a case needs 'response' or 'messages' (exactly one of them)")
        if self.messages is not None:
            transcript_text(self.messages)  # refuses a transcript without an assistant turn, early
        if not isinstance(self.expected, bool) and not math.isfinite(self.expected):
            raise ValueError("'expected' must be a finite number or a bool")
        return self

    def label(self, threshold: float) -> bool:
        """Whether a verifier should accept this response (score at or above ``threshold``)."""
        return self.expected if isinstance(self.expected, bool) else self.expected >= threshold

    def sample(self) -> Sample:
        text = self.response if self.response is not None else transcript_text(self.messages or [])
        return Sample(id=self.id, prompt=self.prompt, response=text, reference=self.reference, metadata=self.metadata)


class Exploit(_Edge):
    """A reward hack written for this project, with the attack that inspired it."""

    id: str
    response: str
    reference: Any = None
    prompt: str | None = None
    attack: str = Field(description="What the response tries, in one line.")
    inspired_by: str = Field(description="The report, paper or codebase where this kind of hack was seen.")

    def sample(self) -> Sample:
        return Sample(id=self.id, prompt=self.prompt, response=self.response, reference=self.reference)


def transcript_text(messages: list[dict[str, Any]]) -> str:
    """The last assistant turn as text: its content, then its tool calls in the Hermes form
    (``<tool_call>{"name", "arguments"}</tool_call>``) that text verifiers such as ``tool_call`` read."""
    turns = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    if not turns:
        raise ValueError("'messages' holds no assistant turn to score")
    turn = turns[-1]
    content = turn.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    elif content is not None and not isinstance(content, str):
        raise ValueError("an assistant turn's content must be text or a list of text parts")
    pieces = [content or ""]
    for call in turn.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass  # left as the string it is: the verifier reports it as malformed
        pieces.append(
            "<tool_call>" + json.dumps({"name": function.get("name"), "arguments": arguments}) + "</tool_call>"
        )
    return "\n".join(piece for piece in pieces if piece)
