"""NeMo-Gym resources servers that rewardhub stands in for: one verify request, read as that server reads it.

``/v1/compat/nemo-gym/{name}/verify`` serves a rewardhub verifier by its name, reading the request
generically (:mod:`.convert`). When ``{name}`` is the name of a NeMo-Gym resources server listed
here, the request is read the way that server's ``verify`` reads it instead, so that pointing a
NeMo-Gym config at ``{rewardhub}/v1/compat/nemo-gym/mcqa`` gives mcqa's reward:

- **what text the server reads** (:data:`TEXT_READINGS`): every ``output_text`` part of the
  output's messages joined (math_with_judge, mcqa, structured_outputs, reasoning_gym), the first
  content part of the last output item (instruction_following, ifbench), the assistant messages
  joined by lines (gui_coordinate), no text at all (the tool-call servers, which read only the
  ``function_call`` items), or one that the row's fields choose (``text_of``: structured_outputs'
  ``tool_call`` mode validates its one call's arguments);
- the output is one assistant turn: that text, and every ``function_call`` of the output as its
  calls, in order (the servers judge the whole output, not its last turn);
- **which verifier and config** reproduce the server's rule, from the server's config where a
  name carries it (``mcqa:{grading_mode}``) and the task's own fields (IFEval's
  ``grading_mode``, mcqa's ``grading_mode`` and ``options``), and **what reference** the verifier gets;
- **which reading**: where rewardhub deliberately differs from a server (xlam_fc's BFCL rules,
  structured_outputs' think block), the row's ``reading`` may name the server (``"reading":
  "xlam_fc"``) to get the server's exact reading instead of ``"rewardhub"``'s; the answer's
  ``rewardhub.reading`` names the reading used (:func:`reading_of`).

What each server's reward is measured against, and where rewardhub's rule differs, is in
``docs/compat.md`` (tests/api/compat/test_nemo_gym_servers.py replays each server's own example
rollouts). Not served: ``math_with_judge``'s LLM-judge fallback (the reward here is its library
reward) and mcqa's ``template_metadata`` regexes (a 422 naming the field, never a guessed 0).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardhub.errors import InvalidRequest
from rewardhub.types import VerifierSpec

__all__ = ["BASE_SERVERS", "SERVERS", "Server", "TEXT_READINGS", "reading_of"]

Task = dict[str, Any]


def _output_text(output: list[dict[str, Any]]) -> str:
    """The Responses API's ``output_text``: every ``output_text`` part of every message, joined."""
    return "".join(
        part["text"]
        for item in output
        if item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
    )


def _last_item_text(output: list[dict[str, Any]]) -> str:
    """The text of the first content part of the last output item ("" when it has none)."""
    if not output:
        return ""
    content = output[-1].get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else ""
    return ""


def _assistant_lines(output: list[dict[str, Any]]) -> str:
    """Every text of the assistant's messages, one per line, stripped."""
    texts: list[str] = []
    for item in output:
        if item.get("type") != "message" or item.get("role") != "assistant":
            continue
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts).strip()


TEXT_READINGS: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "output_text": _output_text,
    "last_item": _last_item_text,
    "assistant_lines": _assistant_lines,
    "none": lambda output: "",
}


@dataclass(frozen=True)
class Server:
    """One NeMo-Gym resources server: how its verify request becomes a rewardhub sample.

    ``spec`` and ``reference`` read the task's fields (the verify body without the rollout). A
    field the server requires that is missing, or a feature of the server that is not served, is
    :class:`~rewardhub.errors.InvalidRequest` (422, naming the field), as the server's own request
    model refuses such a body; a reference the verifier cannot use is that sample's ``error``.
    """

    spec: Callable[[Task], VerifierSpec]
    reference: Callable[[Task], Any]
    text: str = "output_text"
    text_of: Callable[[list[dict[str, Any]], Task], str] | None = None  # when the task's fields decide the text
    note: str = ""  # where rewardhub's rule is known to differ from the server's, shown in the answer
    readings: tuple[str, ...] = ()  # the row's ``reading`` values beside "rewardhub" (see :func:`reading_of`)


def reading_of(task: Task, readings: tuple[str, ...]) -> str | None:
    """The row's ``reading``: ``"rewardhub"`` (the default, rewardhub's rules where they deliberately
    differ from the server's) or the server's own name, which asks for the server's exact reading; None
    for a server that has one reading. Anything else is a 422."""
    if not readings:
        return None
    reading = task.get("reading", "rewardhub")
    if reading not in ("rewardhub", *readings):
        allowed = ", ".join(repr(r) for r in ("rewardhub", *readings))
        raise InvalidRequest(f"reading must be one of {allowed}; got {reading!r}")
    return reading


def _field(task: Task, name: str) -> Any:
    if name not in task:
        raise InvalidRequest(f"the verify request has no '{name}', which this NeMo-Gym server reads")
    return task[name]


# --- math_with_judge: math-verify's verdict on the last box; the LLM judge is not called ------------


def _math_spec(task: Task) -> VerifierSpec:
    # The server gives 0 to a response without a \boxed{} before any comparison, and reads the whole
    # output text, a <think> block included.
    return {"name": "math", "config": {"anchors": ["boxed"], "unanchored": False, "strip_think": False}}


# --- instruction_following and ifbench: verifiable instructions ------------------------------------


def _instruction_fields(task: Task) -> dict[str, Any]:
    """The row's fields as the server reads them: ``verifier_metadata`` first, the top level as a fallback."""
    metadata = task.get("verifier_metadata") if isinstance(task.get("verifier_metadata"), dict) else {}
    fields = {k: task[k] for k in ("instruction_id_list", "kwargs", "prompt", "grading_mode") if k in task}
    return {**fields, **metadata}


def _instruction_row(task: Task) -> dict[str, Any]:
    fields = _instruction_fields(task)
    row = {"instruction_id_list": _field(fields, "instruction_id_list"), "kwargs": _field(fields, "kwargs")}
    # The server treats a null kwargs entry as {} and leaves out null arguments.
    row["kwargs"] = [{k: v for k, v in (kw or {}).items() if v is not None} for kw in row["kwargs"] or []]
    if "prompt" in fields:
        row["prompt"] = fields["prompt"]
    return row


def _grading(task: Task, default: str) -> str:
    mode = _instruction_fields(task).get("grading_mode", default)
    if mode not in ("binary", "fraction"):
        raise InvalidRequest(f"grading_mode must be 'binary' or 'fraction', got {mode!r}")
    return "all" if mode == "binary" else "fraction"


def _instruction_following_spec(task: Task) -> VerifierSpec:
    # NeMo-Gym checks an empty response like any other text and reads the whole of it (no think split).
    config = {"mode": _grading(task, "binary"), "judge_empty_response": True, "strip_think": False}
    return {"name": "ifeval", "config": config}


def _ifbench_spec(task: Task) -> VerifierSpec:
    # IFBench's server fails every instruction of an empty response, as IFEval does.
    return {"name": "ifeval", "config": {"mode": _grading(task, "fraction"), "strip_think": False}}


_UNKNOWN_ID_NOTE = (
    "an instruction id ifeval has no rule for makes the sample an error (masked); the server counts it as not followed"
)


# --- mcqa and gpqa_diamond: one letter ---------------------------------------------------------------


def _letters(task: Task) -> str:
    """The option letters of mcqa's ``options`` (``[{"A": "text"}, ...]``; a null text is no option)."""
    options = task.get("options") or []
    letters = {
        key.upper()
        for entry in options
        if isinstance(entry, dict)
        for key, text in entry.items()
        if isinstance(key, str) and len(key) == 1 and key.isalpha() and text is not None
    }
    return "".join(sorted(letters))


MCQA_MODES = ("strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon", "lenient_answer_colon_md")
"""mcqa's grading modes (the row's ``grading_mode``; the server's default is the first). The server's
request model admits the first three; the fourth, which its config can set, is admitted here too."""


def _mcqa_spec(task: Task, server_mode: str | None = None) -> VerifierSpec:
    """mcqa's reading of the row; ``server_mode`` is the server config's ``grading_mode``, which
    overrides the row's (``self.config.grading_mode or body.grading_mode``)."""
    template = task.get("template_metadata") or {}
    if template.get("output_regex"):
        raise InvalidRequest("mcqa's template_metadata.output_regex is not served: no rewardhub verifier runs it")
    letters = _letters(task)
    if not letters:
        raise InvalidRequest("mcqa needs 'options' ([{'A': 'text'}, ...]): without them no letter is allowed")
    mode = server_mode or task.get("grading_mode") or MCQA_MODES[0]
    if mode not in MCQA_MODES:
        raise InvalidRequest(f"mcqa's grading_mode must be one of {', '.join(MCQA_MODES)}; got {mode!r}")
    config = {"letters": letters, "mode": mode, "options": _options(task), "strip_think": False}
    if mode == "lenient_answer_colon_md" and isinstance(template.get("answer_prefix"), str):
        config["answer_prefix"] = template["answer_prefix"]
    return {"name": "choice", "config": config}


def _options(task: Task) -> list[dict[str, str | None]]:
    """The row's options with text keys and text (or null) values, as the server's model takes them."""
    options = task.get("options") or []
    return [
        {key: text for key, text in entry.items() if isinstance(key, str) and (text is None or isinstance(text, str))}
        for entry in options
        if isinstance(entry, dict)
    ]


def _gpqa_spec(task: Task) -> VerifierSpec:
    if (task.get("template_metadata") or {}).get("output_regex"):
        raise InvalidRequest(
            "gpqa_diamond's template_metadata.output_regex is not served: no rewardhub verifier runs it"
        )
    # gpqa_diamond accepts any capital letter when the row has no options.
    letters = _letters(task) or "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {"name": "choice", "config": {"letters": letters, "mode": "gpqa", "strip_think": False}}


def _mcqa_gold(task: Task) -> str:
    return str(task.get("expected_answer") or "").strip().upper()


# --- the tool-call servers -------------------------------------------------------------------------


def _xlam_spec(task: Task) -> VerifierSpec:
    if reading_of(task, ("xlam_fc",)) == "xlam_fc":
        return {"name": "tool_call", "config": {"reading": "xlam_fc"}}
    return "tool_call"


def _xlam_reference(task: Task) -> list[dict[str, Any]]:
    """xlam's ``expected_answers``, as the server reads them in its own reading, else as a BFCL possible answer."""
    calls = _xlam_calls(task)
    if reading_of(task, ("xlam_fc",)) == "xlam_fc":
        return [{"name": name, "arguments": arguments} for name, arguments in calls]
    return [{name: {key: [_bfcl_allowed(value)] for key, value in arguments.items()}} for name, arguments in calls]


def _xlam_calls(task: Task) -> list[tuple[str, dict[str, Any]]]:
    """xlam's ``expected_answers`` (``[{"name", "arguments"}]``), arguments read as the server reads them."""
    expected = task.get("expected_answers") or []
    answer = []
    for index, call in enumerate(expected):
        arguments = call.get("arguments", {}) if isinstance(call, dict) else None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = {}  # the server reads unparsable expected arguments as none
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not isinstance(arguments, dict):
            raise InvalidRequest(f"expected_answers[{index}] is not a call {{'name', 'arguments'}}")
        answer.append((call["name"], arguments))
    return answer


def _bfcl_allowed(value: Any) -> Any:
    """One expected value as BFCL writes an allowed value: a dict (or a list of dicts) holds each key's
    allowed values as a list, so the dict xlam expects is ``{key: [value]}`` there."""
    if isinstance(value, dict):
        return {key: [item] for key, item in value.items()}
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [_bfcl_allowed(item) for item in value]
    return value


# --- structured_outputs: JSON against the row's schema, made strict as the server makes it ------------


def _strict(schema: Any) -> Any:
    """The server's ``strictify_schema``: every object with properties requires them all and no others."""
    if isinstance(schema, dict):
        schema = {key: _strict(value) for key, value in schema.items()}
        if "properties" in schema:
            schema["required"] = list(schema["properties"])
            schema["additionalProperties"] = False
    return schema


STRUCTURED_SYNTAXES = ("json", "yaml", "toml", "csv", "xml")
"""structured_outputs' schema types, each ``json_schema``'s ``syntax`` of that name (xml read by xmltodict,
as the server reads it, its text typed by the schema as the server's default ``xml_coerce_types`` types it)."""


def _structured_spec(task: Task) -> VerifierSpec:
    if _tool_call_mode(task):
        # the server validates the call's arguments as they parse: no text, no think block
        return {"name": "json_schema", "config": {"source": "full", "strip_think": False}}
    schema_type = task.get("schema_type", "json")
    if schema_type not in STRUCTURED_SYNTAXES:
        raise InvalidRequest(f"structured_outputs schema_type {schema_type!r} is not served: {STRUCTURED_SYNTAXES}")
    config: dict[str, Any] = {"source": "full"}
    if schema_type != "json":
        config["syntax"] = schema_type
    # rewardhub reads the text after a think block; the server's reading parses the whole text.
    if reading_of(task, ("structured_outputs",)) == "structured_outputs":
        config["strip_think"] = False
    return {"name": "json_schema", "config": config}


def _tool_call_mode(task: Task) -> bool:
    mode = task.get("response_mode") or "text"
    if mode not in ("text", "tool_call"):
        raise InvalidRequest(f"structured_outputs response_mode must be 'text' or 'tool_call'; got {mode!r}")
    return mode == "tool_call"


def _structured_text(output: list[dict[str, Any]], task: Task) -> str:
    """What the server parses: the output text, or in ``tool_call`` mode the one call's arguments (their
    ``tool_payload_key`` field when the row names one) as JSON text, and "" where the server finds no
    payload and gives 0: no call or several, another tool than ``tool_name``, arguments that are not
    JSON, no such key."""
    if not _tool_call_mode(task):
        return _output_text(output)
    calls = [item for item in output if item.get("type") == "function_call"]
    if len(calls) != 1 or (task.get("tool_name") and calls[0].get("name") != task["tool_name"]):
        return ""
    payload = calls[0].get("arguments")
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except (ValueError, RecursionError):
            return ""
    elif not isinstance(payload, dict):
        return ""
    key = task.get("tool_payload_key")
    if key:
        if not isinstance(payload, dict) or key not in payload:
            return ""
        payload = payload[key]
    return json.dumps(payload)


def _structured_schema(task: Task) -> Any:
    try:
        return _strict(json.loads(_field(task, "schema_str")))
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"schema_str is not JSON: {exc}") from None


# --- the table -------------------------------------------------------------------------------------

SERVERS: dict[str, Server] = {
    "math_with_judge": Server(
        spec=_math_spec,
        reference=lambda task: _field(task, "expected_answer"),
        note="the library path only (the LLM judge the server asks when math-verify says no is not called), "
        "with rewardhub's math conventions where they differ from math-verify's",
    ),
    "instruction_following": Server(
        spec=_instruction_following_spec, reference=_instruction_row, text="last_item", note=_UNKNOWN_ID_NOTE
    ),
    "ifbench": Server(spec=_ifbench_spec, reference=_instruction_row, text="last_item", note=_UNKNOWN_ID_NOTE),
    "mcqa": Server(spec=_mcqa_spec, reference=_mcqa_gold),
    "gpqa_diamond": Server(spec=_gpqa_spec, reference=_mcqa_gold),
    "xlam_fc": Server(
        spec=_xlam_spec,
        reference=_xlam_reference,
        text="none",
        note="BFCL's rules: an argument the expected call does not name scores 0 (the server ignores it), "
        "strings compare by BFCL's normalisation (the server: exactly) and a float for an integer scores 0 "
        "(the server: 45.0 == 45); reading 'xlam_fc' asks for the server's",
        readings=("xlam_fc",),
    ),
    "example_single_tool_call": Server(
        spec=lambda task: {"name": "tool_sequence", "config": {"required": ["get_weather"]}},
        reference=lambda task: None,
        text="none",
    ),
    "structured_outputs": Server(
        spec=_structured_spec,
        reference=_structured_schema,
        text_of=_structured_text,
        note="the text after a <think> block is read, without the whitespace around it (the server parses the whole "
        "text as written; reading 'structured_outputs' asks for that); a schema no validator accepts is an error "
        "(the server: 0)",
        readings=("structured_outputs",),
    ),
    "gui_coordinate": Server(
        spec=lambda task: {
            "name": "grounding",
            "config": {"task": "click", "coordinates": "thousandths", "answer_format": "point_tag"},
        },
        reference=lambda task: {
            "expected_answer": _field(task, "expected_answer"),
            "max_dist": task.get("max_dist", 0.15),
        },
        text="assistant_lines",
    ),
    "reasoning_gym": Server(
        # The server reads the whole text and scores with each family's default-config scorer.
        spec=lambda task: {
            "name": "reasoning_gym",
            "config": {"on_scorer_error": "zero", "strip_think": False, "entry_config": "default"},
        },
        reference=lambda task: {k: task.get(k) for k in ("question", "answer", "metadata")},
    ),
}
SERVERS.update(
    {
        f"mcqa:{mode}": Server(spec=lambda task, mode=mode: _mcqa_spec(task, mode), reference=_mcqa_gold)
        for mode in MCQA_MODES
    }
)
"""The NeMo-Gym servers rewardhub stands in for, by the name NeMo-Gym gives them; ``mcqa:{mode}`` is
mcqa with its server config's ``grading_mode`` set (``/v1/compat/nemo-gym/mcqa:lenient_answer_colon_md``
as a NeMo-Gym resources server's base URL), the mode that wins over the row's."""

BASE_SERVERS = tuple(name for name in SERVERS if ":" not in name)
"""The servers themselves, without their configured variants."""
