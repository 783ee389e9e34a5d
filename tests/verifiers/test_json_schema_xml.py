"""`json_schema` with `syntax: "xml"`: XML read as xmltodict reads it, typed by the schema as NeMo-Gym's
structured_outputs server types it, and hostile XML (entities, external entities, DTDs, nesting,
size) scored as a sample, never a crash, a hang or a file read.

The server's verdict on generated cases is the differential's (tests/api/compat/
test_nemo_gym_servers_agreement.py); these pin the rules and the defences one by one.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifiers.json_schema import JsonSchemaVerifier, parse_json, xml_typed

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },  # fmt: skip
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}
DOC = {"type": "object", "properties": {"person": PERSON}, "required": ["person"], "additionalProperties": False}
"""A schema as the server's XML datasets write it: the root element is the one top-level property."""


def score(response: str, reference: Any = DOC, **config: Any) -> Result:
    return JsonSchemaVerifier().score(
        Sample(response=response, reference=reference), JsonSchemaVerifier.Config(syntax="xml", **config)
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("<r>1</r>", {"r": "1"}),
        ('<r a="1"><b>2</b>tail</r>', {"r": {"@a": "1", "b": "2", "#text": "tail"}}),  # attributes, mixed text
        ("<r><b>1</b><b>2</b></r>", {"r": {"b": ["1", "2"]}}),  # a repeated element is a list
        ("<r><a/><b></b><c>  </c></r>", {"r": {"a": None, "b": None, "c": None}}),  # empty is null
        ("<r><![CDATA[a < b]]> &amp; &#233;</r>", {"r": "a < b & é"}),
        ('<?xml version="1.0"?>\n<!-- note -->\n<r>x</r>\n', {"r": "x"}),
        (
            '<r xmlns="urn:x"><p:b xmlns:p="urn:p">1</p:b></r>',
            {"r": {"@xmlns": "urn:x", "p:b": {"@xmlns:p": "urn:p", "#text": "1"}}},
        ),  # fmt: skip
        ("<r>1</r><r>2</r>", None),  # two roots
        ("<r>1", None),
        ("<r>fish & chips</r>", None),
        ("Here it is: <r>1</r>", None),
        ("```xml\n<r>1</r>\n```", None),  # the whole text is read (source full)
    ],
)
def test_xml_is_read_as_xmltodict_reads_it(text: str, value: Any) -> None:
    parsed = parse_json(text, "full", syntax="xml")
    assert (parsed and parsed.value) == value


def test_a_declaration_must_open_the_text_in_the_servers_reading_only() -> None:
    text = '\n<?xml version="1.0"?><r>1</r>'
    assert parse_json(text, "full", strip_think_block=False, syntax="xml") is None  # expat: not at the start
    assert parse_json(text, "full", syntax="xml").value == {
        "r": "1"
    }  # rewardhub's reading: whitespace is not the answer
    assert parse_json(f"<think>x</think>{text}", "full", syntax="xml").value == {"r": "1"}


def test_a_fenced_xml_block_is_found_with_source_auto() -> None:
    parsed = parse_json('Sure:\n```xml\n<?xml version="1.0"?>\n<r>1</r>\n```\n', syntax="xml")
    assert (parsed.value, parsed.source) == ({"r": "1"}, "fenced")


@pytest.mark.parametrize(
    ("value", "schema", "typed"),
    [
        ("42", {"type": "integer"}, 42),
        (" 42 ", {"type": "integer"}, 42),  # int() allows the spaces (xmltodict strips them anyway)
        ("5.0", {"type": "integer"}, "5.0"),  # stays text, for the schema to refuse
        ("9" * 5000, {"type": "integer"}, "9" * 5000),  # past Python's digit limit: stays text
        ("2.5", {"type": "number"}, 2.5),
        ("1e3", {"type": "number"}, 1000.0),
        ("TRUE", {"type": "boolean"}, True),
        ("0", {"type": "boolean"}, False),
        ("yes", {"type": "boolean"}, "yes"),
        ("42", {"type": "string"}, "42"),
        (None, {"type": "string"}, ""),  # an empty element of a string is ""
        (None, {"type": "integer"}, None),  # ... of anything else stays null
        (None, {"type": ["string", "null"]}, None),  # a list of types types nothing
        ("7", {"type": ["integer", "null"]}, "7"),
        ("7", {"anyOf": [{"type": "integer"}]}, "7"),  # nor does a schema without a type
        ({"item": ["1", "2"]}, {"type": "array", "items": {"type": "integer"}}, [1, 2]),  # a wrapper unwrapped
        ({"item": "1"}, {"type": "array", "items": {"type": "integer"}}, [1]),  # one item in a wrapper
        ("1", {"type": "array", "items": {"type": "integer"}}, [1]),  # one repeated element
        (["1", "x"], {"type": "array", "items": {"type": "integer"}}, [1, "x"]),
        (None, {"type": "array", "items": {"type": "integer"}}, []),  # an empty element
        ({"a": "1", "b": "2"}, {"type": "array"}, [{"a": "1", "b": "2"}]),  # two keys: not a wrapper
        (
            {"n": "1", "@id": "2", "x": "3"},
            {"type": "object", "properties": {"n": {"type": "integer"}}},
            {"n": 1, "@id": "2", "x": "3"},
        ),  # fmt: skip
        ("1", {"type": "object", "properties": {}}, "1"),
    ],
)
def test_xml_text_is_typed_by_the_schema_as_the_server_types_it(value: Any, schema: Any, typed: Any) -> None:
    assert xml_typed(value, schema) == typed


@pytest.mark.parametrize(
    ("text", "reward"),
    [
        ("<person><name>Ada</name><age>36</age><tags><tag>x</tag><tag>y</tag></tags></person>", 1.0),
        ("<person><name>Ada</name><age>36</age><tags>x</tags><tags>y</tags></person>", 1.0),  # repeated elements
        ("<person><name>Ada</name><age>36</age><tags><tag>x</tag></tags></person>", 1.0),  # a single item
        ("<person><name/><age>36</age><tags/></person>", 1.0),  # empty string, empty array
        ("<person><name>Ada</name><age/><tags/></person>", 0.0),  # an empty integer is null
        ("<person><name>Ada</name><age>36.0</age><tags/></person>", 0.0),
        ("<person><name>Ada</name><tags/></person>", 0.0),  # missing
        ("<person><name>Ada</name><age>36</age><tags/><x>1</x></person>", 0.0),  # extra
        ('<person id="1"><name>Ada</name><age>36</age><tags/></person>', 0.0),  # an attribute is a key
        ("<name>Ada</name><age>36</age><tags/>", 0.0),  # no root
        ("<think>an XML person</think>\n<person><name>Ada</name><age>36</age><tags/></person>", 1.0),
    ],
)
def test_xml_scores(text: str, reward: float) -> None:
    result = score(text)
    assert (result.status, result.score, result.details["syntax"]) == ("ok", reward, "xml")


# --- hostile XML: each a sample's verdict, the server's --------------------------------------------

STRING = {"type": "object", "properties": {"r": {"type": "string"}}}


def _laughs(levels: int) -> str:
    entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1))
    return f"<!DOCTYPE r [{entities}]><r>&l{levels};</r>"


@pytest.mark.parametrize("levels", [3, 9])  # 30,000 characters; 3 * 10^9, a billion laughs
def test_an_entity_declaration_is_refused_so_nothing_expands(levels: int) -> None:
    # The server's xmltodict refuses any entity declaration (a 0). Expanded, three levels would be a
    # string the schema accepts; nine would be stopped by expat's amplification limit
    result = score(_laughs(levels), STRING)
    assert (result.status, result.score, result.details["parsed"]) == ("ok", 0.0, False)


class _Reads:
    """The files this process opens while it is being watched (a Python audit hook)."""

    watching = False
    opened: list[str] = []

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.watching and event == "open" and isinstance(args[0], str | bytes):
            cls.opened.append(str(args[0]))


sys.addaudithook(_Reads.hook)


def watched(action: Any) -> tuple[Any, list[str]]:
    _Reads.opened.clear()
    _Reads.watching = True
    try:
        return action(), list(_Reads.opened)
    finally:
        _Reads.watching = False


@pytest.mark.parametrize(
    ("text", "reward"),
    [
        ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', 0.0),  # XXE: refused
        ('<!DOCTYPE r [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><r>x</r>', 0.0),  # a parameter entity
        ('<!DOCTYPE r SYSTEM "file:///etc/passwd"><r>x</r>', 1.0),  # an external DTD: never loaded, as the server
    ],
)
def test_an_external_entity_is_never_read(text: str, reward: float) -> None:
    result, opened = watched(lambda: score(text, STRING))
    assert (result.status, result.score) == ("ok", reward)
    assert not [path for path in opened if "passwd" in path]
    # the watch does see a read
    assert [p for p in watched(lambda: open("/etc/passwd").close())[1] if "passwd" in p] == ["/etc/passwd"]


@pytest.mark.parametrize(
    ("dtd", "reward"),
    [
        ("<!DOCTYPE r>", 1.0),
        ("<!DOCTYPE r [<!ELEMENT r (#PCDATA)>]>", 1.0),
        ('<!DOCTYPE r [<!ATTLIST r lang CDATA "en">]>', 0.0),  # a default attribute: r is {"@lang", "#text"}
        ('<!DOCTYPE r [<!ENTITY who "Ada">]>', 0.0),  # any entity declaration
    ],
)
def test_a_dtd_is_read_as_the_server_reads_it(dtd: str, reward: float) -> None:
    result = score(f"{dtd}<r>Ada</r>", STRING)
    assert (result.status, result.score) == ("ok", reward)


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_nesting_where_a_string_belongs_is_a_zero_not_a_crash(depth: int) -> None:
    # xmltodict reads any depth without recursing; the validator recurses to print the value in its message
    result = score("<r>" + "<a>" * depth + "x" + "</a>" * depth + "</r>", STRING)
    assert (result.status, result.score, result.details["valid"]) == ("ok", 0.0, False)
    assert "too deep to validate" in result.details["errors"][0]["message"]


def test_nesting_under_any_object_is_accepted_as_the_server_accepts_it() -> None:
    schema = {"type": "object", "properties": {"r": {"type": "object"}}}
    assert score("<r>" + "<a>" * 100_000 + "x" + "</a>" * 100_000 + "</r>", schema).score == 1.0


def test_a_schema_that_recurses_without_end_is_the_datasets_error_not_a_zero() -> None:
    loop = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    with pytest.raises(VerifierError, match="recurses without end"):
        score("<r>1</r>", loop)


def test_a_huge_document_is_scored() -> None:
    schema = {"type": "object", "properties": {"r": {"type": "array", "items": {"type": "integer"}}}}
    items = "".join(f"<i>{n}</i>" for n in range(200_000))  # 3 MB
    assert score(f"<r>{items}</r>", schema).score == 1.0
    assert score(f"<r>{items}<i>x</i></r>", schema).score == 0.0
    assert score(f"<r><i>{'9' * 1_000_000}</i></r>", schema).score == 0.0  # past int()'s digit limit
