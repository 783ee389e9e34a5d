"""``json_schema``: the response is JSON and validates against the JSON Schema in ``reference``.

The JSON is read from the response after any ``<think>…</think>``, without the whitespace around
it (``strip_think: false`` reads the whole response as written, as NeMo-Gym's
structured_outputs server does; ``syntax`` reads YAML, TOML, CSV or XML instead of JSON, CSV's cells
and XML's text typed by the schema as that server types them): with ``source="auto"`` the whole
response when it parses, else the last fenced code block (```` ```json ```` preferred, then any
fence) that parses. Validation uses the ``jsonschema`` package with the draft the schema
declares (``$schema``; the latest otherwise); ``$ref`` resolves inside the schema only, never over
the network. Score: 1 when valid, ``parse_credit`` when the JSON parses but breaks the schema, 0
when no JSON is found; ``details`` lists where it failed.

A ``reference`` that is not a valid schema, or whose ``$ref`` cannot be resolved, is an ``error``
status: the fault is the dataset's, not the policy's. It judges structure, not the truth of the
values (use ``tool_call`` to check expected argument values).

XML is read by ``xmltodict`` as that server reads it (the root element as the one top-level key,
attributes as ``@name`` keys, mixed text as ``#text``, repeated elements as a list, an empty element
as null), on Python's expat: a document that declares any entity (a billion-laughs expansion, an
external ``SYSTEM`` entity naming a file) does not parse, and expat never reads an external DTD, so
no file or address is ever read. A value nested deeper than the validator can recurse through does
not validate (the server's validator fails it too).
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Literal
from xml.parsers.expat import ExpatError

import xmltodict
import yaml
from jsonschema import FormatChecker
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from pydantic import Field
from referencing import Registry
from referencing.exceptions import Unresolvable

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import strip_think

__all__ = ["JsonSchemaVerifier", "Parsed", "csv_typed", "load_schema", "parse_json", "schema_errors", "xml_typed"]

Source = Literal["auto", "full", "fenced"]
Syntax = Literal["json", "yaml", "toml", "csv", "xml"]

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
MAX_ERRORS_SHOWN = 5
DEEP = 100
"""Nesting past which a validator's recursion is the value's doing, not the schema's."""


@dataclass(frozen=True)
class Parsed:
    value: Any
    source: Literal["full", "fenced"]


def parse_json(
    response: str, source: Source = "auto", strip_think_block: bool = True, syntax: Syntax = "json"
) -> Parsed | None:
    """The JSON value in a response (see the module docstring), or None when there is none;
    ``strip_think_block`` false reads the response as written, a think block and the whitespace around
    the text included (XML's declaration must open the text). ``syntax`` reads the text as YAML, TOML,
    CSV (rows as objects) or XML (as ``xmltodict`` does) instead; an empty text is no value in any syntax."""
    text = strip_think(response).strip() if strip_think_block else response
    if not text.strip():
        return None
    if source in ("auto", "full"):
        value = _loads(text, syntax)
        if value is not _MISSING:
            return Parsed(value, "full")
    if source in ("auto", "fenced"):
        blocks = _FENCE.findall(text)
        # json-tagged fences first, each kind from last to first
        for _, body in sorted(blocks[::-1], key=lambda b: b[0].lower() != "json"):
            value = _loads(body, syntax)
            if value is not _MISSING:
                return Parsed(value, "fenced")
    return None


_MISSING = object()


def _loads(text: str, syntax: Syntax = "json") -> Any:
    try:
        if syntax == "yaml":
            return yaml.safe_load(text)
        if syntax == "toml":
            return tomllib.loads(text)
        if syntax == "csv":
            return list(csv.DictReader(io.StringIO(text)))
        if syntax == "xml":
            # a declared entity is a ValueError: nothing is expanded, no external entity is resolved
            return xmltodict.parse(text, disable_entities=True)
        return json.loads(text)
    # TOML's error is a ValueError, as is text that UTF-8 cannot encode (a lone surrogate) for expat
    except (ValueError, RecursionError, yaml.YAMLError, csv.Error, ExpatError):
        return _MISSING


def csv_typed(rows: list[dict[Any, Any]], schema: Any) -> list[dict[Any, Any]]:
    """CSV rows with each cell read as its column's type in the schema (``items.properties``): CSV
    reads every cell as text. A cell that does not convert stays text, for the schema to refuse; an
    empty cell of a nullable column is null. This is NeMo-Gym structured_outputs' ``coerce_csv_types``."""
    items = schema.get("items", schema) if isinstance(schema, dict) else {}
    columns = items.get("properties", {}) if isinstance(items, dict) else {}
    return [
        {key: _cell(value, (columns.get(key) or {}).get("type", "string")) for key, value in row.items()}
        for row in rows
    ]


def _cell(value: Any, kind: Any) -> Any:
    if isinstance(kind, list):  # the first type the cell converts to ("string" takes it as it is)
        if value in (None, "") and "null" in kind:
            return None
        for each in (k for k in kind if k != "null"):
            typed = _cell(value, each)
            if not isinstance(typed, str) or each == "string":
                return typed
        return value
    if not isinstance(value, str) or value == "":
        return value
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    if kind == "boolean" and value.lower() in ("true", "1", "false", "0"):
        return value.lower() in ("true", "1")
    return value


def xml_typed(value: Any, schema: Any) -> Any:
    """The value ``xmltodict`` read, typed by the schema beside it (XML's text is all strings): this is
    NeMo-Gym structured_outputs' ``coerce_xml_types``, its default.

    Only a schema whose ``type`` is one name types its value: an object's properties by theirs (other
    keys, attributes among them, stay as read); at an array, a lone wrapper element (``{"item": [...]}``,
    ``{"item": x}``) is unwrapped, one value becomes a list of one and an empty element an empty list;
    an empty element of a string is ``""`` (of any other type it stays null); the text of an integer,
    a number or a boolean (``true``/``1``/``false``/``0``, any case) converts with Python's ``int`` and
    ``float``. Text that does not convert stays text, for the schema to refuse."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "object" and isinstance(value, dict):
        properties = schema.get("properties", {})
        return {key: xml_typed(item, properties[key]) if key in properties else item for key, item in value.items()}
    if kind == "array":
        if isinstance(value, dict) and len(value) == 1:
            (value,) = value.values()
        items = value if isinstance(value, list) else [] if value is None else [value]
        return [xml_typed(item, schema.get("items", {})) for item in items]
    if value is None and kind == "string":
        return ""
    if isinstance(value, str) and kind in ("integer", "number", "boolean"):
        return _xml_text(value, kind)
    return value


def _xml_text(text: str, kind: str) -> Any:
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:  # int() also refuses more digits than Python's limit
        return text
    lower = text.lower()
    return lower in ("true", "1") if lower in ("true", "1", "false", "0") else text


def load_schema(reference: Any) -> dict[str, Any] | bool:
    """The schema in ``reference`` (an object, a boolean schema, or JSON text), checked against its meta-schema."""
    schema = reference
    if isinstance(schema, str):
        schema = _loads(schema)
        if schema is _MISSING:
            raise VerifierError("reference is a string but not JSON; it must be a JSON Schema")
    if not isinstance(schema, (dict, bool)):
        raise VerifierError(f"reference must be a JSON Schema object, got {type(reference).__name__}")
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise VerifierError(f"reference is not a valid JSON Schema: {exc.message}") from None
    return schema


def schema_errors(value: Any, schema: dict[str, Any] | bool, check_formats: bool = False) -> list[dict[str, str]]:
    """Every way ``value`` breaks ``schema``, as ``{"path", "message"}`` (empty when valid)."""
    cls = validator_for(schema)
    # An explicit registry that retrieves nothing: jsonschema's default one still fetches a
    # remote $ref (deprecated, with a warning), which would let a reference make this host send
    # requests to any address.
    validator = cls(schema, registry=Registry(), format_checker=FormatChecker() if check_formats else None)
    try:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    except Unresolvable as exc:
        raise VerifierError(f"schema reference cannot be resolved: {exc}") from None
    except RecursionError:
        # XML nests as deep as it is written (its parser does not recurse): a value the validator cannot
        # recurse through, or print in its message, is not one the schema accepts (nor the server's
        # validator). A shallow value that recursed without end met a schema whose $ref loops: its fault.
        if not _nested_deeper(value, DEEP):
            raise VerifierError("the schema recurses without end (a $ref that loops)") from None
        return [{"path": "/", "message": f"the value nests more than {DEEP} levels deep, too deep to validate"}]
    return [{"path": "/" + "/".join(map(str, e.absolute_path)), "message": e.message[:300]} for e in errors]


def _nested_deeper(value: Any, levels: int) -> bool:
    """Whether objects and arrays nest in ``value`` more than ``levels`` deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > levels:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return False


class JsonSchemaVerifier(Verifier):
    """The response (or its last fenced JSON block) parses as JSON and validates against the reference schema."""

    name = "json_schema"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        source: Source = Field(
            "auto", description="Where the JSON is: auto (whole response, else last fenced block), full or fenced."
        )
        parse_credit: float = Field(
            0.0, ge=0, le=1, description="Score for JSON that parses but does not validate (shaping toward the format)."
        )
        check_formats: bool = Field(False, description="Also enforce 'format' keywords (date-time, email, ...).")
        syntax: Syntax = Field(
            "json",
            description="The text's syntax: json, yaml, toml, csv (its rows as objects, cells typed by the schema) "
            "or xml (read as xmltodict reads it, its text typed by the schema).",
        )
        strip_think: bool = Field(
            True,
            description="Read the JSON after a <think> block; false parses the whole response as written, the block "
            "and surrounding whitespace included.",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        schema = load_schema(sample.reference)
        parsed = parse_json(sample.response, config.source, config.strip_think, config.syntax)
        if parsed is None:
            return Result.ok(0.0, parsed=False, valid=False, syntax=config.syntax)
        value = parsed.value
        if config.syntax == "csv":
            value = csv_typed(value, schema)
        elif config.syntax == "xml":
            value = xml_typed(value, schema)
        errors = schema_errors(value, schema, config.check_formats)
        return Result.ok(
            config.parse_credit if errors else 1.0,
            syntax=config.syntax,
            parsed=True,
            source=parsed.source,
            valid=not errors,
            error_count=len(errors),
            errors=errors[:MAX_ERRORS_SHOWN],
        )
