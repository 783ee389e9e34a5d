"""``tool_call`` with BFCL possible answers: the verdicts, read from three call shapes, and agreement
with BFCL's own AST checker (bfcl-eval, as released) on every case of the table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bfcl_checker import bfcl_verdict, load

from rewardhub.types import Sample
from rewardhub.verifiers.tool_call import ToolCallVerifier


def fn(name: str, required: list[str], **properties: Any) -> dict[str, Any]:
    """A BFCL function description; a property is a type name, or a schema for arrays and dicts."""
    props = {k: (v if isinstance(v, dict) else {"type": v}) for k, v in properties.items()}
    return {
        "name": name,
        "description": name,
        "parameters": {"type": "dict", "properties": props, "required": required},
    }


WEATHER = fn("get_weather", ["city"], city="string", unit="string", days="integer")
AREA = fn("triangle_area", ["base", "height"], base="float", height="float", unit="string")
FLIGHT = fn(
    "book_flight", ["route"], route={"type": "array", "items": {"type": "string"}}, seats="integer", window="boolean"
)
FILTER = fn("search", ["filters"], filters={"type": "dict", "properties": {}}, limit="integer")
ROWS = fn("insert_rows", ["rows"], rows={"type": "array", "items": {"type": "dict"}})
SCORES = fn("mean", ["values"], values={"type": "array", "items": {"type": "float"}})

# (case id, function descriptions, possible answer, the model's calls, our verdict)
CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], bool]] = [
    (
        "exact",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""], "days": ["", 1]}}],
        [{"get_weather": {"city": "Paris", "unit": "celsius"}}],
        True,
    ),
    (
        "optional omitted",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""]}}],
        [{"get_weather": {"city": "Paris"}}],
        True,
    ),
    (
        "string normalised",
        [WEATHER],
        [{"get_weather": {"city": ["New York, NY"]}}],
        [{"get_weather": {"city": "new york ny"}}],
        True,
    ),
    (
        "string quotes and case",
        [WEATHER],
        [{"get_weather": {"city": ["O'Hare"]}}],
        [{"get_weather": {"city": 'O"HARE'}}],
        True,
    ),
    (
        "string other value",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}],
        [{"get_weather": {"city": "Lyon"}}],
        False,
    ),
    (
        "int for float",
        [AREA],
        [{"triangle_area": {"base": [10.0], "height": [5.0]}}],
        [{"triangle_area": {"base": 10, "height": 5}}],
        True,
    ),
    (
        "float for int",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"], "days": [3]}}],
        [{"get_weather": {"city": "Paris", "days": 3.0}}],
        False,
    ),
    (
        "string for int",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"], "days": [3]}}],
        [{"get_weather": {"city": "Paris", "days": "3"}}],
        False,
    ),
    (
        "bool is not int",
        [FLIGHT],
        [{"book_flight": {"route": [["SFO", "JFK"]], "seats": [1, ""]}}],
        [{"book_flight": {"route": ["SFO", "JFK"], "seats": True}}],
        False,
    ),
    (
        "missing required",
        [AREA],
        [{"triangle_area": {"base": [10.0], "height": [5.0]}}],
        [{"triangle_area": {"base": 10.0}}],
        False,
    ),
    (
        "missing non-optional",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"], "unit": ["celsius"]}}],
        [{"get_weather": {"city": "Paris"}}],
        False,
    ),
    (
        "unexpected param",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}],
        [{"get_weather": {"city": "Paris", "unit": "celsius"}}],
        False,
    ),
    (
        "undescribed param",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}],
        [{"get_weather": {"city": "Paris", "country": "FR"}}],
        False,
    ),
    (
        "wrong function",
        [WEATHER, AREA],
        [{"get_weather": {"city": ["Paris"]}}],
        [{"triangle_area": {"base": 1.0, "height": 2.0}}],
        False,
    ),
    (
        "multiple: the right one",
        [WEATHER, AREA],
        [{"triangle_area": {"base": [3.0], "height": [4.0], "unit": ["", "cm"]}}],
        [{"triangle_area": {"base": 3, "height": 4.0, "unit": "CM"}}],
        True,
    ),
    (
        "list in order",
        [FLIGHT],
        [{"book_flight": {"route": [["SFO", "JFK"]]}}],
        [{"book_flight": {"route": ["sfo", "j f k"]}}],
        True,
    ),
    (
        "list out of order",
        [FLIGHT],
        [{"book_flight": {"route": [["SFO", "JFK"]]}}],
        [{"book_flight": {"route": ["JFK", "SFO"]}}],
        False,
    ),
    (
        "list too long",
        [FLIGHT],
        [{"book_flight": {"route": [["SFO", "JFK"]]}}],
        [{"book_flight": {"route": ["SFO", "JFK", "LAX"]}}],
        False,
    ),
    (
        "list of ints for floats",
        [SCORES],
        [{"mean": {"values": [[1.0, 2.5]]}}],
        [{"mean": {"values": [1, 2.5]}}],
        False,
    ),
    ("list of floats", [SCORES], [{"mean": {"values": [[1.0, 2.5]]}}], [{"mean": {"values": [1.0, 2.5]}}], True),
    (
        "list item of wrong type",
        [FLIGHT],
        [{"book_flight": {"route": [["SFO", "JFK"]]}}],
        [{"book_flight": {"route": ["SFO", 7]}}],
        False,
    ),
    (
        "bool value",
        [FLIGHT],
        [{"book_flight": {"route": [["A", "B"]], "window": [True]}}],
        [{"book_flight": {"route": ["A", "B"], "window": True}}],
        True,
    ),
    (
        "dict element by element",
        [FILTER],
        [{"search": {"filters": [{"color": ["Red"], "size": ["L", ""]}]}}],
        [{"search": {"filters": {"color": "red"}}}],
        True,
    ),
    (
        "dict wrong value",
        [FILTER],
        [{"search": {"filters": [{"color": ["Red"]}]}}],
        [{"search": {"filters": {"color": "blue"}}}],
        False,
    ),
    (
        "dict extra key",
        [FILTER],
        [{"search": {"filters": [{"color": ["Red"]}]}}],
        [{"search": {"filters": {"color": "red", "size": "L"}}}],
        False,
    ),
    (
        "dict missing key",
        [FILTER],
        [{"search": {"filters": [{"color": ["Red"], "size": ["L"]}]}}],
        [{"search": {"filters": {"color": "red"}}}],
        False,
    ),
    (
        "list of dicts",
        [ROWS],
        [{"insert_rows": {"rows": [[{"id": [1]}, {"id": [2]}]]}}],
        [{"insert_rows": {"rows": [{"id": 1}, {"id": 2}]}}],
        True,
    ),
    (
        "list of dicts reordered",
        [ROWS],
        [{"insert_rows": {"rows": [[{"id": [1]}, {"id": [2]}]]}}],
        [{"insert_rows": {"rows": [{"id": 2}, {"id": 1}]}}],
        False,
    ),
    (
        "parallel in order",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}, {"get_weather": {"city": ["Rome"]}}],
        [{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Rome"}}],
        True,
    ),
    (
        "parallel any order",
        [WEATHER, AREA],
        [{"get_weather": {"city": ["Paris"]}}, {"triangle_area": {"base": [1.0], "height": [2.0]}}],
        [{"triangle_area": {"base": 1, "height": 2}}, {"get_weather": {"city": "paris"}}],
        True,
    ),
    (
        "parallel missing call",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}, {"get_weather": {"city": ["Rome"]}}],
        [{"get_weather": {"city": "Paris"}}],
        False,
    ),
    (
        "parallel extra call",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}, {"get_weather": {"city": ["Rome"]}}],
        [{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Rome"}}, {"get_weather": {"city": "Oslo"}}],
        False,
    ),
    (
        "parallel one wrong",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}, {"get_weather": {"city": ["Rome"]}}],
        [{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Milan"}}],
        False,
    ),
    (
        "simple but two calls",
        [WEATHER],
        [{"get_weather": {"city": ["Paris"]}}],
        [{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Paris"}}],
        False,
    ),
]
CASES.append(
    (
        "parallel overlapping answers",
        [fn("f", ["x"], x="integer")],
        [{"f": {"x": [1, 2]}}, {"f": {"x": [1]}}],
        [{"f": {"x": 1}}, {"f": {"x": 2}}],
        True,
    )
)
KNOWN_DIFFERENCES = {
    "parallel overlapping answers": "BFCL gives each expected call the first call that fits (x=1 to the first), "
    "and then none is left for the second; a full matching (x=2 to the first, x=1 to the second) exists",
}
IDS = [case[0] for case in CASES]


def openai_turn(calls: list[dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, call in enumerate(calls)
        for name, args in call.items()
    ]
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def hermes_text(calls: list[dict[str, Any]]) -> str:
    return "".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for c in calls for n, a in c.items()
    )


def python_text(calls: list[dict[str, Any]]) -> str:
    written = [f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for c in calls for n, a in c.items()]
    return f"[{', '.join(written)}]"


def ours(functions: list[dict[str, Any]], answer: list[dict[str, Any]], sample: dict[str, Any]) -> float:
    reference = {"possible_answer": answer, "functions": functions}
    result = ToolCallVerifier().score(
        Sample.model_validate({**sample, "reference": reference}), ToolCallVerifier.Config()
    )
    assert result.status == "ok"
    return result.score


@pytest.mark.parametrize(("functions", "answer", "calls", "verdict"), [case[1:] for case in CASES], ids=IDS)
def test_the_verdict_is_the_same_in_every_call_shape(functions, answer, calls, verdict) -> None:
    user = {"role": "user", "content": "do it"}
    shapes = {
        "openai tool_calls": {"messages": [user, openai_turn(calls)]},
        "hermes": {"messages": [user, {"role": "assistant", "content": hermes_text(calls)}]},
        "python": {"response": python_text(calls)},
    }
    assert {shape: ours(functions, answer, sample) for shape, sample in shapes.items()} == dict.fromkeys(
        shapes, float(verdict)
    )


def test_our_verdicts_agree_with_bfcls_checker() -> None:
    try:
        load()
    except ImportError as exc:
        pytest.skip(f"bfcl-eval is not installed: {exc}")
    rows = []
    for case_id, functions, answer, calls, verdict in CASES:
        theirs = bfcl_verdict(functions, calls, answer)
        mine = ours(functions, answer, {"messages": [{"role": "user", "content": "x"}, openai_turn(calls)]}) == 1.0
        rows.append((case_id, verdict, mine, theirs))
    differ = sorted(case_id for case_id, _, mine, theirs in rows if mine != theirs)
    print(f"\nagreement with bfcl-eval's AST checker: {len(rows) - len(differ)}/{len(rows)} cases; differ: {differ}")
    assert [row for row in rows if row[2] != row[1]] == [], "our verdicts differ from the table"
    assert differ == sorted(KNOWN_DIFFERENCES), "our verdicts differ from BFCL's beyond the known differences"


# --- the verdict's reasons and the other shapes of the reference -----------------------------------

ANSWER = [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""]}}]


def judge(sample: dict[str, Any], reference: Any = ANSWER, **config: Any):
    return ToolCallVerifier().score(
        Sample.model_validate({**sample, "reference": reference}), ToolCallVerifier.Config(**config)
    )


def calls_turn(*calls: tuple[str, Any]) -> dict[str, Any]:
    tool_calls = [{"id": f"c{i}", "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]
    return {
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": tool_calls}]
    }


@pytest.mark.parametrize(
    ("sample", "reason"),
    [
        (calls_turn(("get_weather", '{"city": "Paris", "unit": "celsius", "x": 1}')), "unexpected_param"),
        (calls_turn(("get_weather", '{"unit": "celsius"}')), "missing_required"),
        (calls_turn(("get_weather", '{"city": "Paris"')), "malformed_arguments"),
        (calls_turn(("get_weather", '["Paris"]')), "malformed_arguments"),
        (calls_turn(("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Paris"}')), "extra_call"),
        (calls_turn(("get_time", '{"city": "Paris"}')), "missing_call"),
        ({"response": "The weather is fine."}, "missing_call"),
        ({"response": "get_weather('Paris')"}, "malformed_arguments"),
        ({"response": "get_weather(city=input())"}, "malformed_arguments"),
        ({"response": "<tool_call>{not json}</tool_call>"}, "missing_call"),
    ],
)
def test_each_failure_scores_zero_with_its_reason(sample: dict[str, Any], reason: str) -> None:
    result = judge(sample)
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, reason)
    assert result.details["errors"]


def test_a_malformed_call_says_what_is_wrong_with_it() -> None:
    result = judge(calls_turn(("get_weather", "{oops")))
    assert result.details["calls"] == [{"name": "get_weather", "problem": "arguments are not JSON"}]
    assert result.details["errors"] == ["arguments are not JSON"]


def test_an_empty_possible_answer_expects_no_call() -> None:
    assert judge({"response": "I cannot help with that."}, reference=[]).score == 1.0
    refused = judge(calls_turn(("get_weather", '{"city": "Paris"}')), reference=[])
    assert (refused.score, refused.details["reason"]) == (0.0, "extra_call")


def test_without_descriptions_types_come_from_the_allowed_values() -> None:
    answer = [{"area": {"base": [10.0], "n": [3]}}]
    assert judge({"response": "area(base=10, n=3)"}, reference=answer).score == 1.0
    assert judge({"response": "area(base=10.0, n=3.0)"}, reference=answer).details["reason"] == "type_error"
    assert judge({"response": "area(base=True, n=3)"}, reference=answer).details["reason"] == "type_error"


def test_the_calls_are_read_from_the_last_assistant_turn_only() -> None:
    earlier = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "a", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
    }
    messages = [{"role": "user", "content": "q"}, earlier, {"role": "tool", "tool_call_id": "a", "content": "sunny"}]
    done = judge({"messages": [*messages, {"role": "assistant", "content": "It is sunny."}]})
    assert (done.score, done.details["reason"]) == (0.0, "missing_call")


def test_partial_credit_is_the_share_of_calls_matched() -> None:
    answer = [{"f": {"x": [1]}}, {"g": {}}]
    assert judge({"response": "[f(x=1), g()]"}, reference=answer, partial_credit=True).score == 1.0
    assert judge({"response": "[f(x=2), g()]"}, reference=answer, partial_credit=True).score == 0.5
    assert judge({"response": "[f(x=1), g(), h()]"}, reference=answer, partial_credit=True).score == pytest.approx(
        2 / 3
    )
