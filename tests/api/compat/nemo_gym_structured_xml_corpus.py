"""structured_outputs' ``schema_type: xml`` cases, generated over the ways models write XML.

The server parses the whole text with ``xmltodict.parse`` (the root element as the one top-level
key, attributes as ``@name``, repeated elements as lists, an empty element as null, every leaf a
string), types the strings by the schema (``coerce_xml_types``, its default) and validates against
the schema made strict. Its datasets wrap an object's properties in one root element
(``{"type": "object", "properties": {"response": {...}}}``, NeMo-Gym's ``wrap_schema_for_xml``), so
these schemas do too.

Each schema is answered by its value written right (compact, pretty, with a declaration, arrays as a
wrapper of item elements or as repeated elements, one item alone either way), as models wrap it
(fenced, prose around, after a think block, the declaration after a newline, in two parts, a comment
first), with the types models get wrong (an integer as ``5.0`` or a word, booleans as ``True``, ``1``
or ``yes``, a string that looks like a number), with empty elements, with keys missing or extra,
attributes, a namespace, the wrong root, no root, two roots, malformed XML; and by XML's own tricks:
entities (a billion laughs, a ``SYSTEM`` entity naming /etc/passwd, a parameter entity, an internal
entity for a value, an undefined one, character references), DTDs (an external one naming a file, an
internal subset, a default attribute), CDATA; and nesting 5,000 and 100,000 deep, 50,000 items, a
300,000-digit integer.
"""

from __future__ import annotations

import json
import random
from typing import Any
from xml.sax.saxutils import escape

Item = tuple[Any, ...]

STRINGS = ("Paris", "", "naïve café", 'a "quoted" word', "a < b & c", "line\nbreak", "42")
ROOTS = ("response", "data", "result", "root")


def _property(rng: random.Random, depth: int) -> dict[str, Any]:
    kind = rng.choice(
        ["string", "integer", "number", "boolean", "enum", "nullable", "bounded", "pattern", "anyof", "array"]
        + (["object", "objects"] if depth < 2 else [])
    )
    return {
        "string": lambda: {"type": "string"},
        "integer": lambda: {"type": "integer"},
        "number": lambda: {"type": "number"},
        "boolean": lambda: {"type": "boolean"},
        "enum": lambda: {"type": "string", "enum": ["low", "medium", "high"]},
        "nullable": lambda: {"type": ["string", "null"]},
        "bounded": lambda: {"type": "integer", "minimum": 0, "maximum": 100},
        "pattern": lambda: {"type": "string", "pattern": "^[A-Z]{3}$"},
        "anyof": lambda: {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 5}]},
        "array": lambda: {"type": "array", "items": {"type": rng.choice(["string", "integer", "number", "boolean"])}},
        "object": lambda: _object(rng, depth + 1),
        "objects": lambda: {"type": "array", "items": _object(rng, depth + 1)},
    }[kind]()


def _object(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    names = rng.sample(["name", "age", "score", "active", "tags", "level", "code", "note", "items", "id"], 4)
    return {"type": "object", "properties": {name: _property(rng, depth) for name in names}}


def _schema(rng: random.Random) -> tuple[dict[str, Any], str]:
    root, inner = rng.choice(ROOTS), _object(rng)
    inner["properties"] = {"title": {"type": "string"}, **inner["properties"]}  # a plain string in each
    schema = {"type": "object", "properties": {root: inner}, "required": [root], "additionalProperties": False}
    return schema, root


def _value(rng: random.Random, schema: dict[str, Any]) -> Any:
    """A value that the schema (made strict) accepts once XML has been read back and typed."""
    if "anyOf" in schema:
        return rng.choice([7, "short"])
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "pattern" in schema:
        return rng.choice(["ABC", "XYZ"])
    kind = schema["type"]
    if isinstance(kind, list):
        return rng.choice(["x", None])
    if kind == "object":
        return {name: _value(rng, sub) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [_value(rng, schema["items"]) for _ in range(rng.randint(1, 3))]
    return {
        "string": lambda: rng.choice(STRINGS),
        "integer": lambda: rng.randint(0, 100),
        "number": lambda: rng.choice([0.5, 3, -2.25, 1e10]),
        "boolean": lambda: rng.choice([True, False]),
    }[kind]()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return escape(str(value), {'"': "&quot;"})


def to_xml(tag: str, value: Any, arrays: str = "wrapped", indent: str | None = None, level: int = 0) -> str:
    """``value`` as an element ``tag``: an object's keys as child elements, an array as a wrapper of
    ``item`` elements (``arrays="wrapped"``) or as ``tag`` repeated (``"repeated"``), null as an empty
    element; ``indent`` pretty-prints."""
    pad, newline = ("", "") if indent is None else (indent * level, "\n")
    if isinstance(value, list) and arrays == "repeated":
        return newline.join(to_xml(tag, item, arrays, indent, level) for item in value) if value else f"{pad}<{tag}/>"
    if isinstance(value, list):
        value = {"item": value} if value else None
        if value is not None:
            inner = to_xml("item", value["item"], "repeated", indent, level + 1)
            return f"{pad}<{tag}>{newline}{inner}{newline}{pad}</{tag}>"
    if value is None:
        return f"{pad}<{tag}/>"
    if isinstance(value, dict):
        inner = newline.join(to_xml(key, item, arrays, indent, level + 1) for key, item in value.items())
        return f"{pad}<{tag}>{newline}{inner}{newline}{pad}</{tag}>" if value else f"{pad}<{tag}/>"
    return f"{pad}<{tag}>{_text(value)}</{tag}>"


DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


def _writings(root: str, value: dict[str, Any]) -> list[tuple[str, list[Item]]]:
    """The right value as models write it: ``think_block`` marks rewardhub's reading of a think block,
    ``leading_whitespace`` its reading of a declaration after a newline (both conventions)."""
    text = to_xml(root, value)
    pretty = to_xml(root, value, indent="  ")
    half = len(text) // 2
    return [
        ("right", [("message", text)]),
        ("pretty", [("message", pretty)]),
        ("repeated_elements", [("message", to_xml(root, value, "repeated"))]),
        ("declared", [("message", f"{DECLARATION}\n{pretty}\n")]),
        ("leading_whitespace/declared", [("message", f"\n{DECLARATION}\n{pretty}")]),
        ("whitespace_around", [("message", f"\n  {text}\n\n")]),
        ("comment_first", [("message", f"<!-- the answer -->\n{text}")]),
        ("fenced", [("message", f"```xml\n{pretty}\n```")]),
        ("prose_around", [("message", f"Here is the XML:\n{text}\nHope this helps!")]),
        ("think_block", [("message", f"<think>The schema wants a {root}.</think>\n{text}")]),
        ("think_block/declared", [("message", f"<think>Declare it.</think>\n{DECLARATION}\n{text}")]),
        ("think_block_xml_inside", [("message", f"<think>{text}</think>")]),
        ("unclosed_think", [("message", f"<think>Let me see.\n{text}")]),
        ("reasoning_item", [("reasoning", "The schema wants XML."), ("message", text)]),
        ("two_parts", [("parts", [text[:half], text[half:]])]),
        ("two_roots", [("message", text + text)]),
        ("empty", [("message", "")]),
    ]


def _retyped(rng: random.Random, inner: dict[str, Any], value: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each scalar field as models mistype it, an empty element for it, and its arrays' single items."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, sub in inner["properties"].items():
        kind = sub.get("type")
        kind = "anyof" if kind is None else "nullable" if isinstance(kind, list) else kind
        kind = "enum" if "enum" in sub else "pattern" if "pattern" in sub else kind
        out.append((f"empty_element_for_{kind}", {**value, name: None}))
        if kind in ("integer", "number"):
            out += [
                (f"decimal_point_for_{kind}", {**value, name: "5.0"}),
                (f"word_for_{kind}", {**value, name: "five"}),
            ]
            out.append((f"padded_{kind}", {**value, name: " 7 "}))
        if kind == "boolean":
            out += [(f"bool_{word}", {**value, name: word}) for word in ("True", "1", "0", "yes")]
        if kind == "string":
            out.append(("digits_for_string", {**value, name: "007"}))
            out.append(("repeated_scalar", {**value, name: ["a", "b"]}))
        if kind == "array" and value[name]:
            out.append(("one_item_array", {**value, name: value[name][:1]}))
            out.append(("empty_array", {**value, name: []}))
    key = rng.choice(list(value))
    out += [("missing_key", {k: v for k, v in value.items() if k != key}), ("extra_key", {**value, "extra": "1"})]
    return out


def _malformed(root: str, text: str) -> list[tuple[str, str]]:
    body = text[len(root) + 2 : -(len(root) + 3)]
    return [
        ("unclosed_root", text[: -(len(root) + 3)]),
        ("mismatched_case", f"<{root}>{body}</{root.upper()}>"),
        ("unescaped_ampersand", f"<{root}>{body}<x>fish & chips</x></{root}>"),
        ("truncated", text[: len(text) * 2 // 3]),
        ("no_root", body),
        ("wrong_root", f"<answer>{body}</answer>"),
        ("attribute_on_root", f'<{root} id="7">{body}</{root}>'),
        ("namespace", f'<{root} xmlns="http://example.com/ns">{body}</{root}>'),
        ("bare_text", "ABC"),
    ]


def _entities(root: str, value: dict[str, Any]) -> list[tuple[str, str]]:
    """XML's own tricks, on a value the schema otherwise accepts: in its plain string field."""
    field = "title"

    def holding(text: str, head: str = "") -> str:
        return head + to_xml(root, {**value, field: "@@"}).replace("@@", text, 1)

    laughs = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    return [
        ("billion_laughs", holding("&lol9;", f"<!DOCTYPE {root} [{laughs}]>")),
        ("external_entity", holding("&x;", f'<!DOCTYPE {root} [<!ENTITY x SYSTEM "file:///etc/passwd">]>')),
        ("parameter_entity", holding("x", f'<!DOCTYPE {root} [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>')),
        ("internal_entity", holding("&who;", f'<!DOCTYPE {root} [<!ENTITY who "Paris">]>')),
        ("undefined_entity", holding("caf&eacute;")),
        ("character_references", holding("caf&#233; &#x41;&amp;&lt;")),
        ("cdata", holding("<![CDATA[a < b & c]]>")),
        ("external_dtd", holding("Paris", f'<!DOCTYPE {root} SYSTEM "file:///etc/passwd">')),
        ("internal_dtd", holding("Paris", f"<!DOCTYPE {root} [<!ELEMENT {root} ANY>]>")),
        ("dtd_default_attribute", holding("Paris", f'<!DOCTYPE {root} [<!ATTLIST {root} lang CDATA "en">]>')),
    ]


def _deep() -> list[tuple[str, dict[str, Any], str]]:
    """Nesting where a string belongs (the validator's message cannot print it: the server's 0) and under
    a field whose schema is any object (the server's 1). xmltodict reads any depth without recursing."""
    schema = {"type": "object", "properties": {"root": {"type": "object", "properties": {"blob": {"type": "object"}, "name": {"type": "string"}}}}}  # fmt: skip
    out = []
    for depth in (5000, 100_000):
        nested = "<a>" * depth + "x" + "</a>" * depth
        out.append((f"deep_{depth}_for_a_string", schema, f"<root><blob/><name>{nested}</name></root>"))
        out.append((f"deep_{depth}_for_an_object", schema, f"<root><blob>{nested}</blob><name>x</name></root>"))
    return out


def _huge(rng: random.Random) -> list[tuple[str, dict[str, Any], str]]:
    schema = {"type": "object", "properties": {"root": {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "integer"}}}}}}  # fmt: skip
    rows = [rng.randint(0, 10**6) for _ in range(50_000)]
    right = to_xml("root", {"rows": rows})
    return [
        ("huge_valid", schema, right),
        ("huge_one_word", schema, right.replace(f"<item>{rows[-1]}</item>", "<item>x</item>")),
        ("huge_string_for_integer", schema, f"<root><rows><item>{'9' * 300_000}</item></rows></root>"),
    ]


def xml_cases(rng: random.Random, schemas: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def add(schema: Any, shape: str, output: list[Item]) -> None:
        row = {"schema_str": json.dumps(schema), "schema_type": "xml"}
        cases.append({"server": "structured_outputs", "row": row, "output": output, "shape": f"xml/{shape}"})

    for _ in range(schemas):
        schema, root = _schema(rng)
        inner = schema["properties"][root]
        value = _value(rng, inner)
        for shape, output in _writings(root, value):
            add(schema, shape, output)
        for shape, other in _retyped(rng, inner, value):
            add(schema, shape, [("message", to_xml(root, other, rng.choice(["wrapped", "repeated"])))])
        for shape, bad in _malformed(root, to_xml(root, value)):
            add(schema, shape, [("message", bad)])
        for shape, text in _entities(root, value):
            add(schema, shape, [("message", text)])
        add(
            schema,
            "attributes_for_fields",
            [("message", f"<{root} " + " ".join(f'{k}="{_text(v)}"' for k, v in value.items()) + "/>")],
        )
    unwrapped = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
    add(unwrapped, "schema_without_root", [("message", "<root><name>Ada</name><age>36</age></root>")])
    add({"type": "object", "properties": {"name": {"type": "string"}}}, "root_is_the_property", [("message", "<name>Ada</name>")])  # fmt: skip
    for shape, schema, text in _deep() + _huge(rng):
        add(schema, shape, [("message", text)])
    return cases
