"""`json_schema`: where the JSON is found, validation verdicts, and schemas that are the dataset's fault."""

from importlib.metadata import entry_points

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.json_schema import JsonSchemaVerifier, parse_json

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def score(response, reference=PERSON, **config):
    return JsonSchemaVerifier().score(
        Sample(response=response, reference=reference), JsonSchemaVerifier.Config(**config)
    )


@pytest.mark.parametrize(
    ("response", "source", "value", "where"),
    [
        ('{"a": 1}', "auto", {"a": 1}, "full"),
        ("  [1, 2]\n", "auto", [1, 2], "full"),
        ('Here:\n```json\n{"a": 1}\n```\nDone.', "auto", {"a": 1}, "fenced"),
        ('```json\n{"a": 1}\n```\nthen\n```json\n{"a": 2}\n```', "auto", {"a": 2}, "fenced"),  # the last one
        ('```json\n{"a": 1}\n```\n```python\nx = 1\n```', "auto", {"a": 1}, "fenced"),  # json fence preferred
        ('```\n{"a": 3}\n```', "auto", {"a": 3}, "fenced"),  # untagged fence as a fallback
        ('<think>{"a": 0}</think>{"a": 1}', "auto", {"a": 1}, "full"),
        ('```json\n{"a": 1}\n```', "full", None, None),
        ('{"a": 1}', "fenced", None, None),
        ("no json here", "auto", None, None),
        ('{"a": 1', "auto", None, None),
    ],
)
def test_finding_the_json(response, source, value, where):
    parsed = parse_json(response, source)
    if where is None:
        assert parsed is None
    else:
        assert (parsed.value, parsed.source) == (value, where)


@pytest.mark.parametrize(
    ("response", "config", "expected"),
    [
        ('{"name": "Ada", "age": 36}', {}, 1.0),
        ('```json\n{"name": "Ada", "age": 36}\n```', {}, 1.0),
        ('{"name": "Ada"}', {}, 0.0),
        ('{"name": "Ada"}', {"parse_credit": 0.2}, 0.2),
        ('{"name": "Ada", "age": -1}', {}, 0.0),
        ('{"name": "Ada", "age": 36, "x": 1}', {}, 0.0),
        ("Ada, 36", {"parse_credit": 0.2}, 0.0),  # no JSON, no credit
    ],
)
def test_scores(response, config, expected):
    result = score(response, **config)
    assert result.status == "ok"
    assert result.score == expected


def test_details_list_the_violations():
    details = score('{"name": 7, "age": -1}').details
    assert details["parsed"] and not details["valid"]
    assert details["error_count"] == 2
    assert [e["path"] for e in details["errors"]] == ["/age", "/name"]
    assert score("nope").details == {"parsed": False, "valid": False, "syntax": "json"}


@pytest.mark.parametrize(
    ("reference", "response", "config", "expected"),
    [
        ('{"type": "array", "items": {"type": "number"}}', "[1, 2.5]", {}, 1.0),  # schema as JSON text
        (True, "null", {}, 1.0),  # boolean schemas
        (False, "null", {}, 0.0),
        ({"type": "string", "format": "email"}, '"not-an-email"', {}, 1.0),
        ({"type": "string", "format": "email"}, '"not-an-email"', {"check_formats": True}, 0.0),
        ({"$defs": {"n": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/n"}}, "[1, 2]", {}, 1.0),
    ],
)
def test_schema_features(reference, response, config, expected):
    assert score(response, reference, **config).score == expected


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (None, "must be a JSON Schema"),
        (["type"], "must be a JSON Schema"),
        ("{not json", "not JSON"),
        ({"type": "nope"}, "not a valid JSON Schema"),
        ({"$ref": "#/definitions/missing"}, "cannot be resolved"),
        ({"$ref": "https://example.com/remote.json"}, "cannot be resolved"),  # never fetched
    ],
)
def test_a_bad_schema_is_an_error_not_a_zero(reference, message):
    with pytest.raises(VerifierError, match=message):
        score('{"a": 1}', reference)


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in JsonSchemaVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="json_schema")
    assert ep.load() is JsonSchemaVerifier
