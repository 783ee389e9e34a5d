"""Reading the tool calls an assistant turn made, in every shape models write them.

A trajectory's calls reach a verifier in one of four shapes, and the reader tries them in this
order, taking the first that yields calls:

1. structured OpenAI ``tool_calls`` on the turn (``arguments`` a JSON string, or a dict as chat
   templates keep it);
2. Hermes / Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` tags in the text;
3. JSON in the text (the whole text or its last fenced block): ``{"name", "arguments"}`` objects,
   ``{"type": "function", "function": {...}}``, ``{"tool_calls": [...]}`` or lists of these;
4. Python call syntax, as BFCL's prompting models write it: ``get_weather(city="Paris")`` or
   ``[f(a=1), g(b=[1, 2])]``. Only a text that is nothing but calls counts: an answer in prose
   that happens to parse is not a call.

Reasoning (``<think>…</think>``) is skipped. A call that cannot be read whole is kept, with its
``problem`` said (arguments that are not JSON, a positional argument, a value that is an
expression): the judge then scores it 0 with that reason, since a malformed call is the policy's
mistake. Nothing here runs a tool or evaluates an expression (values are read with
``ast.literal_eval``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from rewardhub.types import ChatMessage

from .json_schema import parse_json
from .text import strip_think

__all__ = ["ParsedCall", "calls_in_text", "calls_in_turn", "python_calls"]

# the body may not contain another opener: many unclosed tags would otherwise rescan the text
_HERMES = re.compile(r"<tool_call>((?:(?!<tool_call>).)*?)</tool_call>", re.DOTALL)
_MAX_PYTHON_CHARS = 100_000  # ast.parse of a huge text is slow and a call list is never that long


@dataclass(frozen=True)
class ParsedCall:
    """One call as read: ``arguments`` is None when it could not be read as an object, and ``problem`` says why."""

    name: str | None
    arguments: dict[str, Any] | None
    problem: str | None = None


def calls_in_turn(turn: ChatMessage) -> list[ParsedCall]:
    """The calls of one assistant turn: its structured ``tool_calls``, else those written in its text."""
    if turn.tool_calls:
        return [_from_arguments(call.function.name, call.function.arguments) for call in turn.tool_calls]
    return calls_in_text(turn.content)


def calls_in_text(text: str) -> list[ParsedCall]:
    """The calls written in a text: Hermes tags, else JSON, else Python call syntax (the module docstring)."""
    text = strip_think(text)
    bodies = _HERMES.findall(text)
    if bodies:
        return [_from_object(_loads(body)) for body in bodies]
    parsed = parse_json(text)
    if parsed is not None:
        found = _json_calls(parsed.value)
        if found:
            return found
    return python_calls(text) or []


def python_calls(text: str) -> list[ParsedCall] | None:
    """Calls in Python syntax, or None when the text is not a call or a list of calls."""
    source = _unfence(text.strip())
    if not source or len(source) > _MAX_PYTHON_CHARS:
        return None
    try:
        tree = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    nodes = tree.elts if isinstance(tree, ast.List | ast.Tuple) else [tree]
    if not nodes or not all(isinstance(node, ast.Call) for node in nodes):
        return None
    return [_from_python(node) for node in nodes]  # type: ignore[arg-type]


def _unfence(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and text.count("```") == 2:
        body = text[3:-3]
        return body.split("\n", 1)[1] if "\n" in body and body.split("\n", 1)[0].strip().isidentifier() else body
    return text


def _from_python(node: ast.Call) -> ParsedCall:
    name = _dotted(node.func)
    if name is None:
        return ParsedCall(None, None, "the called thing is not a function name")
    if node.args:
        return ParsedCall(name, None, "positional arguments: a call names each argument")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return ParsedCall(name, None, "**kwargs: a call names each argument")
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return ParsedCall(name, None, f"argument {keyword.arg!r} is an expression, not a value")
    return ParsedCall(name, arguments)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _json_calls(value: Any) -> list[ParsedCall]:
    if isinstance(value, list):
        return [call for item in value for call in _json_calls(item)]
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return _json_calls(value["tool_calls"])
    if isinstance(value, dict) and ("name" in value or "function" in value):
        return [_from_object(value)]
    return []


def _from_object(obj: Any) -> ParsedCall:
    if obj is _MISSING:
        return ParsedCall(None, None, "the tool call is not JSON")
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    if not isinstance(obj, dict):
        return ParsedCall(None, None, "the tool call is not a JSON object")
    name = obj.get("name") if isinstance(obj.get("name"), str) and obj.get("name") else None
    if name is None:
        return ParsedCall(None, None, "the tool call has no function name")
    return _from_arguments(name, obj.get("arguments", obj.get("parameters", {})))


def _from_arguments(name: str, arguments: Any) -> ParsedCall:
    if isinstance(arguments, str):
        arguments = _loads(arguments) if arguments.strip() else {}
        if arguments is _MISSING:
            return ParsedCall(name, None, "arguments are not JSON")
    if not isinstance(arguments, dict):
        return ParsedCall(name, None, f"arguments are a JSON {type(arguments).__name__}, not an object")
    return ParsedCall(name, arguments)


_MISSING = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _MISSING
