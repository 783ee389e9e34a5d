"""``json_schema``: the response is JSON and validates against the JSON Schema in ``reference``.

The JSON is read from the response after any ``<think>…</think>`` (``strip_think: false`` reads the
whole response, as NeMo-Gym's structured_outputs server does; ``syntax`` reads YAML, TOML or CSV
instead of JSON, CSV's cells typed by the schema as that server types them): with ``source="auto"`` the
whole response when it parses, else the last fenced code block (```` ```json ```` preferred, then
any fence) that parses. Validation uses the ``jsonschema`` package with the draft the schema
declares (``$schema``; the latest otherwise); ``$ref`` resolves inside the schema only, never over
the network. Score: 1 when valid, ``parse_credit`` when the JSON parses but breaks the schema, 0
when no JSON is found; ``details`` lists where it failed.

A ``reference`` that is not a valid schema, or whose ``$ref`` cannot be resolved, is an ``error``
status: the fault is the dataset's, not the policy's. It judges structure, not the truth of the
values (use ``tool_call`` to check expected argument values).
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Literal

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

__all__ = ["JsonSchemaVerifier", "Parsed", "csv_typed", "load_schema", "parse_json", "schema_errors"]

Source = Literal["auto", "full", "fenced"]
Syntax = Literal["json", "yaml", "toml", "csv"]

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
MAX_ERRORS_SHOWN = 5


@dataclass(frozen=True)
class Parsed:
    value: Any
    source: Literal["full", "fenced"]


def parse_json(
    response: str, source: Source = "auto", strip_think_block: bool = True, syntax: Syntax = "json"
) -> Parsed | None:
    """The JSON value in a response (see the module docstring), or None when there is none;
    ``strip_think_block`` false reads a think block as part of the text. ``syntax`` reads the text as
    YAML, TOML or CSV (rows as objects) instead; an empty text is no value in any syntax."""
    text = (strip_think(response) if strip_think_block else response).strip()
    if not text:
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
        return json.loads(text)
    except (ValueError, RecursionError, yaml.YAMLError, csv.Error):  # TOML's error is a ValueError
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
    return [{"path": "/" + "/".join(map(str, e.absolute_path)), "message": e.message[:300]} for e in errors]


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
            description="The text's syntax: json, yaml, toml or csv (its rows as objects, cells typed by the schema).",
        )
        strip_think: bool = Field(
            True,
            description="Read the JSON after a <think> block; false parses the whole response, the block included.",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        schema = load_schema(sample.reference)
        parsed = parse_json(sample.response, config.source, config.strip_think, config.syntax)
        if parsed is None:
            return Result.ok(0.0, parsed=False, valid=False)
        value = csv_typed(parsed.value, schema) if config.syntax == "csv" else parsed.value
        errors = schema_errors(value, schema, config.check_formats)
        return Result.ok(
            config.parse_credit if errors else 1.0,
            parsed=True,
            source=parsed.source,
            valid=not errors,
            error_count=len(errors),
            errors=errors[:MAX_ERRORS_SHOWN],
        )
