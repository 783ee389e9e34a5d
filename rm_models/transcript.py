"""A conversation as judge-readable text, with everything the model or a tool wrote kept inert.

A judge of a multi-turn, tool-calling trajectory has to see the whole of it: what was asked, what
the assistant said and called, and what the tools returned. Everything but the tags is untrusted:
the assistant's text is the policy's output, and a tool's output is whatever a web page, a file or
an API returned, a classic channel for instructions planted to hijack the reader (indirect prompt
injection). So the transcript is built here, not by string concatenation in a template:

- each turn is one element: ``<turn index=… role=…>``, the assistant's calls as
  ``<tool_call name=…>arguments</tool_call>``, and a tool result as
  ``<tool_output index=… call=… trust="untrusted">``;
- inside every piece of text, every tag of the transcript and of the judge templates is escaped
  (any case, any spacing), so no text can close its element and write outside it;
- attribute values are reduced to a safe alphabet, so a tool name cannot open a tag either.

The templates that show a transcript tell the judge that tool outputs are data and never
instructions. That sentence is not the defence; the structure is: planted text stays inside its
element, marked untrusted, whatever it says. What this cannot do is make a weak judge model
ignore an argument made in plain words inside the data; keep a rule verifier first where one exists.
"""

from __future__ import annotations

import json
import re

from rewardhub.types import ChatMessage, Sample

from .hardening import escape_tags
from .judge_prompts import TAGS

__all__ = ["TRANSCRIPT_TAGS", "question_text", "render_conversation"]

TRANSCRIPT_TAGS = ("conversation", "turn", "tool_call", "tool_output", "reasoning")
"""The transcript's own elements; like the templates' tags, inert inside any text."""

_ALL_TAGS = TAGS + TRANSCRIPT_TAGS
_UNSAFE_ATTRIBUTE = re.compile(r"[^A-Za-z0-9_.:\-]")


def _text(value: str) -> str:
    return escape_tags(value, _ALL_TAGS)


def _attribute(value: str | None) -> str:
    return _UNSAFE_ATTRIBUTE.sub("_", value or "")[:64] or "unknown"


def render_conversation(sample: Sample) -> str:
    """The sample's whole conversation (prompt turns, then what the model did) as tagged, escaped text."""
    turns = sample.conversation()
    names = _call_names(turns)
    lines = []
    for index, turn in enumerate(turns):
        if turn.role == "tool":
            call = names.get(turn.tool_call_id or "", turn.name)
            lines.append(
                f'<tool_output index="{index}" call="{_attribute(call)}" trust="untrusted">'
                f"{_text(turn.content)}</tool_output>"
            )
            continue
        body = _text(turn.content)
        for tool_call in turn.tool_calls or []:
            arguments = tool_call.function.arguments
            shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            body += f'\n<tool_call name="{_attribute(tool_call.function.name)}">{_text(shown)}</tool_call>'
        lines.append(f'<turn index="{index}" role="{turn.role}">{body}</turn>')
    return "\n".join(lines)


def question_text(sample: Sample) -> str:
    """What was asked: the prompt, or the system and user turns of the conversation, as text."""
    if sample.prompt is not None:
        return sample.prompt_text()
    return "\n".join(t.content for t in sample.conversation() if t.role in ("system", "developer", "user"))


def _call_names(turns: list[ChatMessage]) -> dict[str, str]:
    return {call.id: call.function.name for turn in turns for call in turn.tool_calls or [] if call.id}
