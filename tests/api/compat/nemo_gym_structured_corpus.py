"""A seeded corpus over the behaviour of NeMo-Gym's structured_outputs server.

The server (``resources_servers/structured_outputs/app.py``) has a schema type (``json``, ``yaml``,
``xml``, ``toml``, ``csv``) and a response mode (``text``, ``tool_call``). In ``text`` mode it joins
every ``output_text`` part of the output's messages, parses the whole text in the row's
``schema_type`` and validates the value with ``openapi-schema-validator``'s OAS 3.1 validator against
``schema_str`` made strict (every property required, no others); in ``tool_call`` mode it validates
the one call's arguments (or their ``tool_payload_key``).

Schemas are generated over the keywords the server's validator reads (types, nested objects, arrays
of scalars and of objects, enums, nullable type lists, bounds, lengths, patterns, ``anyOf``,
``$defs``/``$ref``, formats, OAS's own ``example``), one schema that declares draft-07 and one that
no validator accepts. Each is answered with a value that validates, written as models write it
(compact, pretty, fenced, prose around, after a think block, in a reasoning item, in two messages or
two parts), and with values that do not (wrong types, missing and extra keys, null, out of range,
malformed JSON, Python literals, truncated, two objects, empty), and huge ones. YAML, TOML and CSV rows
(:func:`syntax_cases`), tool calls (:func:`tool_call_cases`) and XML (``nemo_gym_structured_xml_corpus``)
are generated the same way.

Each case is ``(server, row, output, shape)`` as in ``nemo_gym_servers_corpus``; the items become
NeMo-Gym's own Responses-API objects in its child process (``nemo_gym_side.structured_differential``).
"""

from __future__ import annotations

import csv
import io
import json
import random
from typing import Any

import yaml
from nemo_gym_structured_xml_corpus import xml_cases

SEED = 20262

Item = tuple[Any, ...]

SCALARS = ("string", "integer", "number", "boolean")


def _property(rng: random.Random, depth: int) -> dict[str, Any]:
    kind = rng.choice(
        [*SCALARS, "enum", "nullable", "bounded", "pattern", "format", "array", "anyof"]
        + (["object", "objects"] if depth < 2 else [])
    )
    return {
        "string": lambda: {"type": "string"},
        "integer": lambda: {"type": "integer", "description": "a count", "example": 3},
        "number": lambda: {"type": "number"},
        "boolean": lambda: {"type": "boolean"},
        "enum": lambda: {"type": "string", "enum": ["low", "medium", "high"]},
        "nullable": lambda: {"type": ["string", "null"]},
        "bounded": lambda: {"type": "integer", "minimum": 0, "maximum": 100},
        "pattern": lambda: {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3, "maxLength": 3},
        "format": lambda: {"type": "string", "format": "date"},
        "array": lambda: {"type": "array", "items": {"type": rng.choice(SCALARS)}, "minItems": 1},
        "anyof": lambda: {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 5}]},
        "object": lambda: _object(rng, depth + 1),
        "objects": lambda: {"type": "array", "items": _object(rng, depth + 1)},
    }[kind]()


def _object(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    names = rng.sample(["name", "age", "score", "active", "tags", "level", "code", "when", "note", "items", "id"], 4)
    return {"type": "object", "properties": {name: _property(rng, depth) for name in names}}


def _with_refs(rng: random.Random) -> dict[str, Any]:
    item = _object(rng, 1)
    return {
        "type": "object",
        "$defs": {"item": item},
        "properties": {"first": {"$ref": "#/$defs/item"}, "rest": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
    }


def _strict(schema: Any) -> Any:
    """What the server validates against (its ``strictify_schema``), for building values."""
    if isinstance(schema, dict):
        schema = {key: _strict(value) for key, value in schema.items()}
        if "properties" in schema:
            schema["required"] = list(schema["properties"])
            schema["additionalProperties"] = False
    return schema


def _value(rng: random.Random, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A value that validates against ``schema`` (made strict)."""
    if "$ref" in schema:
        return _value(rng, root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root)
    if "anyOf" in schema:
        return rng.choice([7, "short"])
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return rng.choice(["x", None])
    if kind == "object":
        return {name: _value(rng, sub, root) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [_value(rng, schema["items"], root) for _ in range(rng.randint(1, 3))]
    if "pattern" in schema:
        return rng.choice(["ABC", "XYZ"])
    if schema.get("format") == "date":
        return "2024-02-29"
    return {
        "string": lambda: rng.choice(["Paris", "", "naïve café", 'a "quoted" word', "line\nbreak"]),
        "integer": lambda: rng.randint(0, 100),
        "number": lambda: rng.choice([0.5, 3, -2.25, 1e10]),
        "boolean": lambda: rng.choice([True, False]),
    }[kind]()


def _wrong(rng: random.Random, value: dict[str, Any], schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """Values that break the strict schema, or do not (an integer written 5.0 is an integer), by shape."""
    key = rng.choice(list(value))
    sub = schema["properties"].get(key, {})
    out: list[tuple[str, Any]] = [
        ("missing_key", {k: v for k, v in value.items() if k != key}),
        ("extra_key", {**value, "extra": 1}),
        ("null_value", {**value, key: None}),
        ("value_as_string", {**value, key: json.dumps(value[key])}),
        ("list_of_it", [value]),
    ]
    kinds = {name: sub.get("type") for name, sub in schema["properties"].items()}
    for name, kind in kinds.items():
        if kind == "integer" and "minimum" not in schema["properties"][name]:
            out += [("int_as_float", {**value, name: 5.0}), ("bool_for_int", {**value, name: True})]
            out.append(("float_for_int", {**value, name: 5.5}))
        if schema["properties"][name].get("maximum") is not None:
            out.append(("out_of_range", {**value, name: 101}))
        if "enum" in schema["properties"][name]:
            out.append(("not_in_enum", {**value, name: "HIGH"}))
        if "pattern" in schema["properties"][name]:
            out.append(("pattern_broken", {**value, name: "abc"}))
        if schema["properties"][name].get("format") == "date":
            out.append(("format_broken", {**value, name: "the 29th"}))  # no format is checked by either
        if kind == "number":
            out.append(("number_is_int", {**value, name: 4}))
        if kind == "array":
            out.append(("empty_array", {**value, name: []}))
    if sub.get("type") == "object":
        inner = value[key]
        out.append(("nested_extra_key", {**value, key: {**inner, "extra": True}}))
    return out


def _writings(rng: random.Random, text: str) -> list[tuple[str, list[Item]]]:
    """One JSON text as models write it."""
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    half = len(text) // 2
    return [
        ("compact", [("message", text)]),
        ("pretty", [("message", pretty)]),
        ("whitespace_around", [("message", f"\n  {text}\n\n")]),
        ("fenced", [("message", f"```json\n{pretty}\n```")]),
        ("bare_fence", [("message", f"```\n{text}\n```")]),
        ("prose_around", [("message", f"Here is the JSON:\n{text}\nHope this helps!")]),
        ("think_block", [("message", f"<think>The schema wants an object.</think>\n{text}")]),
        ("think_block_json_inside", [("message", f"<think>{text}</think>")]),
        ("unclosed_think", [("message", f"<think>Let me see.\n{text}")]),
        ("reasoning_item", [("reasoning", "The schema wants an object."), ("message", text)]),
        ("two_messages", [("message", text[:half]), ("message", text[half:])]),
        ("two_parts", [("parts", [text[:half], text[half:]])]),
        ("message_then_call", [("message", text), ("call", "submit", text)]),
    ]


def _malformed(text: str) -> list[tuple[str, str]]:
    return [
        ("trailing_comma", text[:-1] + ",}"),
        ("single_quotes", text.replace('"', "'")),
        ("python_literals", text.replace("true", "True").replace("false", "False").replace("null", "None")),
        ("truncated", text[: len(text) * 2 // 3]),
        ("two_objects", f"{text}\n{text}"),
        ("empty", ""),
        ("whitespace_only", "  \n "),
        ("bom", "\ufeff" + text),
        ("comment", "// the answer\n" + text),
    ]


def _row(schema: Any, **extra: Any) -> dict[str, Any]:
    return {"schema_str": json.dumps(schema), "schema_type": "json", **extra}


def json_cases(rng: random.Random, schemas: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def add(row: dict[str, Any], shape: str, output: list[Item]) -> None:
        cases.append({"server": "structured_outputs", "row": row, "output": output, "shape": shape})

    for index in range(schemas):
        schema = _with_refs(rng) if index % 5 == 4 else _object(rng)
        row, strict = _row(schema), _strict(schema)
        value = _value(rng, strict, strict)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        for shape, output in _writings(rng, text):
            add(row, shape, output)
        for shape, bad in _malformed(text):
            add(row, shape, [("message", bad)])
        if "properties" in strict and all(k in strict["properties"] for k in value):
            for shape, other in _wrong(rng, value, strict):
                add(row, shape, [("message", json.dumps(other))])
                if rng.random() < 0.25:  # a wrong value after a think block is 0 in every reading
                    add(row, f"think_block/{shape}", [("message", f"<think>hmm</think>{json.dumps(other)}")])
    for shape, output in _huge(rng):
        add(
            _row({"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "integer"}}}}),
            shape,
            output,
        )
    for shape, output in _declared_draft():
        add(_row(_DRAFT7), shape, output)
    add(_row({"type": "object", "properties": {"a": {"type": "strnig"}}}), "invalid_schema", [("message", '{"a": 1}')])
    add(_row({"type": "object", "properties": {}}), "no_properties", [("message", "{}")])
    add(_row({"type": "array", "items": {"type": "integer"}}), "top_level_array", [("message", "[1, 2, 3]")])
    add(_row({"type": "integer"}), "nan_for_integer", [("message", "NaN")])
    add(_row({"type": "number"}), "nan_for_number", [("message", "NaN")])
    return cases


def _huge(rng: random.Random) -> list[tuple[str, list[Item]]]:
    rows = [rng.randint(0, 10**6) for _ in range(50_000)]
    deep = "[" * 5000 + "]" * 5000
    return [
        ("huge_valid", [("message", json.dumps({"rows": rows}))]),
        ("huge_string_for_integers", [("message", json.dumps({"rows": ["x" * 300_000]}))]),
        ("deeply_nested", [("message", '{"rows": ' + deep + "}")]),
        ("too_deep_for_the_parser", [("message", '{"rows": ' + "[" * 100_000 + "]" * 100_000 + "}")]),
    ]


_DRAFT7 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
}
"""A schema that declares draft-07, whose ``items`` is a list (tuple validation): the server's OAS 3.1
validator holds it to the 2020-12 meta-schema, where ``items`` is one schema."""


def _declared_draft() -> list[tuple[str, list[Item]]]:
    return [
        ("draft7_tuple_right", [("message", '{"pair": ["a", 1]}')]),
        ("draft7_tuple_wrong", [("message", '{"pair": [1, "a"]}')]),
    ]


def _flat(rng: random.Random) -> dict[str, Any]:
    """An object of scalars and arrays of scalars: what YAML, TOML and CSV rows write alike."""
    kinds = {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
        "level": {"type": "string", "enum": ["low", "high"]},
        "note": {"type": ["string", "null"]},
        "rank": {"type": ["integer", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    }
    return {"type": "object", "properties": {k: kinds[k] for k in rng.sample(list(kinds), 4)}}


def _toml(value: dict[str, Any]) -> str:
    # JSON's scalars and arrays are TOML's (true/false, numbers, "strings" with \u escapes); null has no TOML
    return "\n".join(f"{key} = {json.dumps(item)}" for key, item in value.items() if item is not None)


def _csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    cell = {True: "true", False: "false", None: ""}
    for row in rows:
        writer.writerow([cell.get(row[c], row[c]) if isinstance(row[c], bool | None) else row[c] for c in columns])
    return out.getvalue()


def _text_writings(text: str, fence: str) -> list[tuple[str, list[Item]]]:
    return [
        ("right", [("message", text)]),
        ("fenced", [("message", f"```{fence}\n{text}\n```")]),
        ("prose_before", [("message", f"Here it is:\n{text}")]),
        ("think_block", [("message", f"<think>Writing it now.</think>\n{text}")]),
        ("two_parts", [("parts", [text[: len(text) // 2], text[len(text) // 2 :]])]),
        ("empty", [("message", "")]),
    ]


def syntax_cases(rng: random.Random, schemas: int) -> list[dict[str, Any]]:
    """yaml, toml and csv rows: the value written right in that syntax, as models wrap it, and wrong."""
    cases: list[dict[str, Any]] = []

    def add(kind: str, schema: Any, shape: str, output: list[Item]) -> None:
        row = _row(schema, schema_type=kind)
        cases.append({"server": "structured_outputs", "row": row, "output": output, "shape": f"{kind}/{shape}"})

    for _ in range(schemas):
        schema = _flat(rng)
        value = _value(rng, _strict(schema), _strict(schema))
        key = rng.choice(list(value))
        wrong = {
            **value,
            key: {"string": 7, "integer": "seven", "number": "x", "boolean": "maybe"}.get(
                str(schema["properties"][key].get("type")), [1, 2]
            ),
        }
        yaml_text = yaml.safe_dump(value, allow_unicode=True, sort_keys=False)
        for shape, output in _text_writings(yaml_text, "yaml"):
            add("yaml", schema, shape, output)
        add("yaml", schema, "json_text", [("message", json.dumps(value))])  # JSON is YAML
        add("yaml", schema, "missing_key", [("message", yaml.safe_dump({k: v for k, v in value.items() if k != key}))])
        add("yaml", schema, "wrong_type", [("message", yaml.safe_dump(wrong))])
        add("yaml", schema, "extra_key", [("message", yaml_text + "extra: 1\n")])
        add("yaml", schema, "unquoted_date", [("message", yaml_text + "when: 2024-02-29\n")])
        add("yaml", schema, "tab_indent", [("message", "root:\n\t" + yaml_text)])
        # TOML has no null: a nullable key gets a value
        kinds = {k: str(schema["properties"][k].get("type")) for k in value}
        value = {k: (v if v is not None else 1 if "integer" in kinds[k] else "x") for k, v in value.items()}
        toml_text = _toml(value)
        for shape, output in _text_writings(toml_text, "toml"):
            add("toml", schema, shape, output)
        add("toml", schema, "json_text", [("message", json.dumps(value))])
        add("toml", schema, "wrong_type", [("message", _toml(wrong))])
        add("toml", schema, "no_value", [("message", toml_text + "\nextra = ")])
        columns = [k for k in value if schema["properties"][k].get("type") != "array"]
        table = {
            "type": "array",
            "items": {"type": "object", "properties": {c: schema["properties"][c] for c in columns}},
        }
        rows = [_value(rng, _strict(table)["items"], {}) for _ in range(rng.randint(1, 4))]
        csv_text = _csv(rows, columns)
        for shape, output in _text_writings(csv_text, "csv"):
            add("csv", table, shape, output)
        add("csv", table, "header_only", [("message", _csv([], columns))])
        add("csv", table, "missing_column", [("message", _csv(rows, columns[:-1]))])
        add("csv", table, "extra_column", [("message", csv_text.replace("\n", ",x\n"))])
        add("csv", table, "json_text", [("message", json.dumps(rows))])
        for column in columns:
            kind = str(table["items"]["properties"][column].get("type"))
            for shape, cell in (("float_cell", "5.0"), ("word_cell", "abc"), ("empty_cell", ""), ("one_cell", "1")):
                edited = [{**row, column: cell} for row in rows]
                add("csv", table, f"{shape}_for_{kind}", [("message", _csv(edited, columns))])
    return cases


def tool_call_cases(rng: random.Random, schemas: int) -> list[dict[str, Any]]:
    """response_mode tool_call: the one call's arguments (or their payload key) against the schema."""
    cases: list[dict[str, Any]] = []
    for index in range(schemas):
        schema = _object(rng)
        value = _value(rng, _strict(schema), _strict(schema))
        key = rng.choice(list(value))
        named = {"tool_name": "submit"} if index % 2 else {}
        payload = {"tool_payload_key": "payload"} if index % 3 == 0 else {}
        row = _row(schema, response_mode="tool_call", **named, **payload)

        def args(obj: Any, wrapped: bool = bool(payload)) -> str:
            return json.dumps({"payload": obj} if wrapped else obj)

        outputs = [
            ("right", [("call", "submit", args(value))]),
            ("right_after_text", [("message", "Calling the tool."), ("call", "submit", args(value))]),
            ("other_tool", [("call", "lookup", args(value))]),
            ("two_calls", [("call", "submit", args(value)), ("call", "submit", args(value))]),
            ("no_call", [("message", json.dumps(value))]),
            ("malformed_arguments", [("call", "submit", args(value)[:-1])]),
            ("missing_key", [("call", "submit", args({k: v for k, v in value.items() if k != key}))]),
            ("extra_key", [("call", "submit", args({**value, "extra": 1}))]),
            ("payload_not_wrapped", [("call", "submit", json.dumps(value))]),
            ("think_in_a_string", [("call", "submit", args({**value, key: "<think>x</think>"}))]),
        ]
        for shape, output in outputs:
            cases.append({"server": "structured_outputs", "row": row, "output": output, "shape": f"tool_call/{shape}"})
    return cases


def corpus(schemas: int = 24) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return json_cases(rng, schemas) + syntax_cases(rng, 12) + tool_call_cases(rng, 12) + xml_cases(rng, 12)
