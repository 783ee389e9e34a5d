"""`tool_call`: reading calls in the shapes models emit, and judging name, schema and argument values."""

import json
from importlib.metadata import entry_points

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.call_reading import ParsedCall
from rewardhub.verifiers.tool_call import ToolCallVerifier, extract_calls, values_match

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}
REFERENCE = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}, "schema": WEATHER_SCHEMA}


def hermes(name, arguments):
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def score(response, reference=REFERENCE, **config):
    return ToolCallVerifier().score(Sample(response=response, reference=reference), ToolCallVerifier.Config(**config))


@pytest.mark.parametrize(
    ("response", "calls"),
    [
        (hermes("f", {"x": 1}), [ParsedCall("f", {"x": 1})]),
        (
            "<think>call g?</think>" + hermes("f", {}) + hermes("g", {"y": 2}),
            [ParsedCall("f", {}), ParsedCall("g", {"y": 2})],
        ),
        ("<tool_call>{not json}</tool_call>", [ParsedCall(None, None)]),
        ('{"name": "f", "arguments": "{\\"x\\": 1}"}', [ParsedCall("f", {"x": 1})]),  # OpenAI: arguments as JSON text
        ('{"name": "f", "parameters": {"x": 1}}', [ParsedCall("f", {"x": 1})]),  # Llama style
        ('{"type": "function", "function": {"name": "f", "arguments": {}}}', [ParsedCall("f", {})]),
        (
            '{"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}, {"name": "g"}]}',
            [ParsedCall("f", {}), ParsedCall("g", {})],  # no arguments: a call without parameters
        ),
        (
            '[{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}]',
            [ParsedCall("f", {}), ParsedCall("g", {})],
        ),
        ('Calling:\n```json\n{"name": "f", "arguments": {"x": 1}}\n```', [ParsedCall("f", {"x": 1})]),
        ('{"name": "f", "arguments": "not json"}', [ParsedCall("f", None)]),
        ("The weather in Paris is nice.", []),
        ('{"city": "Paris"}', []),
    ],
)
def test_extracting_calls(response, calls):
    assert [(c.name, c.arguments) for c in extract_calls(response)] == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize(
    ("expected", "actual", "normalise", "same"),
    [
        ("Paris", " paris ", True, True),
        ("Paris", "paris", False, False),
        (1, 1.0, True, True),
        (True, 1, True, False),
        (1, True, True, False),
        ({"a": [1, "X"]}, {"a": [1, "x"]}, True, True),
        ({"a": 1}, {"a": 1, "b": 2}, True, False),
        ([1, 2], [2, 1], True, False),
        (None, None, True, True),
        ("1", 1, True, False),
    ],
)
def test_values_match(expected, actual, normalise, same):
    assert values_match(expected, actual, normalise) is same


@pytest.mark.parametrize(
    ("response", "config", "expected"),
    [
        (hermes("get_weather", {"city": "Paris", "unit": "celsius"}), {}, 1.0),
        (hermes("get_weather", {"city": "paris", "unit": "celsius"}), {}, 1.0),
        (hermes("get_weather", {"city": "paris", "unit": "celsius"}), {"string_match": "exact"}, 0.0),
        (hermes("get_time", {"city": "Paris", "unit": "celsius"}), {}, 0.0),
        (
            hermes("get_time", {"city": "Paris", "unit": "celsius"}),
            {"partial_credit": True},
            0.0,
        ),  # wrong tool: nothing
        (hermes("get_weather", {"city": "Paris", "unit": "kelvin"}), {}, 0.0),
        # schema broken (0 x 0.5) and one of two arguments right (0.5 x 0.5)
        (hermes("get_weather", {"city": "Paris", "unit": "kelvin"}), {"partial_credit": True}, 0.25),
        (hermes("get_weather", {"city": "Lyon", "unit": "celsius"}), {"partial_credit": True}, 0.75),
        (
            hermes("get_weather", {"city": "Lyon", "unit": "celsius"}),
            {"partial_credit": True, "schema_weight": 0.0},
            0.5,
        ),
        (hermes("get_time", {}) + hermes("get_weather", {"city": "Paris", "unit": "celsius"}), {}, 1.0),  # best call
        ("<tool_call>{broken</tool_call>", {}, 0.0),
        ("I would call get_weather for Paris.", {}, 0.0),
    ],
)
def test_scores(response, config, expected):
    result = score(response, **config)
    assert result.status == "ok"
    assert result.score == pytest.approx(expected)


@pytest.mark.parametrize(
    ("reference", "response", "expected"),
    [
        ({"name": "ping"}, hermes("ping", {}), 1.0),  # name only
        ({"name": "ping"}, '{"name": "ping"}', 1.0),
        ({"name": "f", "parameters": {"type": "object", "required": ["q"]}}, hermes("f", {"q": 1}), 1.0),
        ({"name": "f", "parameters": {"type": "object", "required": ["q"]}}, hermes("f", {}), 0.0),
        ({"name": "f", "schema": {"type": "object"}}, '{"name": "f", "arguments": "oops"}', 0.0),
        (
            {"name": "f", "arguments": {"x": 1}},
            hermes("f", {"x": 1, "y": 2}),
            1.0,
        ),  # extra arguments are the schema's call
    ],
)
def test_reference_shapes(reference, response, expected):
    assert score(response, reference).score == expected


PARIS = {"city": "Paris", "unit": "celsius"}


@pytest.mark.parametrize(
    ("response", "policy", "expected"),
    [
        # the expected tool sprayed with several argument sets is a hedge
        (hermes("get_weather", {"city": "London", "unit": "celsius"}) + hermes("get_weather", PARIS), None, 0.0),
        (hermes("get_weather", PARIS) + hermes("get_weather", {**PARIS, "unit": "fahrenheit"}), None, 0.0),
        (hermes("get_weather", PARIS) + hermes("get_weather", PARIS), None, 1.0),  # a repeat is no hedge
        (hermes("get_time", {}) + hermes("get_weather", PARIS), None, 1.0),  # other tools are the task's business
        (hermes("get_time", {}) + hermes("get_weather", PARIS), "reject", 0.0),
        (hermes("get_weather", PARIS) + hermes("get_weather", PARIS), "reject", 1.0),
        (hermes("get_weather", {"city": "London", "unit": "celsius"}) + hermes("get_weather", PARIS), "allow", 1.0),
    ],
)
def test_extra_calls(response, policy, expected):
    result = score(response, **({"extra_calls": policy} if policy else {}))
    assert result.status == "ok" and result.score == expected
    if expected == 0.0:
        assert result.details["reason"] == "extra_calls"


def test_details_explain_the_best_call():
    result = score(
        hermes("get_time", {}) + hermes("get_weather", {"city": "Lyon", "unit": "kelvin"}), partial_credit=True
    )
    assert result.details == {
        "calls_found": 2,
        "malformed_calls": 0,
        "best_call": {
            "name": "get_weather",
            "name_ok": True,
            "schema_ok": False,
            "schema_errors": [{"path": "/unit", "message": "'kelvin' is not one of ['celsius', 'fahrenheit']"}],
            "arguments_matched": 0,
            "arguments_wrong": ["city", "unit"],
        },
    }
    assert score("no call").details == {"calls_found": 0}


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (None, "or one expected call"),
        ([REFERENCE], "possible answer 0 must be one"),  # a list is BFCL's possible answer
        ([{"f": {"x": 1}}], "must list its allowed values"),
        ({"possible_answer": [], "tools": []}, "unknown keys"),
        (
            {
                "possible_answer": [{"f": {}}],
                "functions": [{"name": "f", "parameters": {"properties": {"x": {"type": "complex"}}}}],
            },
            "unknown parameter type",
        ),
        ({"arguments": {}}, "malformed tool_call reference"),
        ({"name": "f", "tool": "g"}, "malformed tool_call reference"),
        ({"name": "f", "schema": {}, "parameters": {}}, "malformed tool_call reference"),
        ({"name": "f", "schema": {"type": 3}}, "not a valid JSON Schema"),
    ],
)
def test_a_malformed_reference_is_an_error_not_a_zero(reference, message):
    with pytest.raises(VerifierError, match=message):
        score(hermes("f", {}), reference)


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in ToolCallVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="tool_call")
    assert ep.load() is ToolCallVerifier
