"""The NeMo-Gym resources servers rewardhub stands in for, replayed on their own shipped rollouts.

For each server of ``rewardhub.api.compat.nemo_gym.servers.SERVERS``, the ``data/example_rollouts.jsonl``
of the pinned wheel (nemo-gym 0.7.0) is turned into verify requests by that server's own request
model (``nemo_gym_side.rollouts``: the task's fields the rollout file dropped are joined back from
the server's ``data/example.jsonl``), all of a server's rollouts are posted in one
``/v1/compat/nemo-gym/{server}/verify_batch`` request, and each reward must equal the reward
recorded in the rollout (``math_with_judge``: its ``library_reward``, since the LLM judge is not
called). The only rollouts allowed to differ are those of :data:`EXPLAINED`, each with its reason,
and each must still differ in the way its reason says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from nemo_gym_support import built, needs_nemo_gym

from rewardhub.api.compat.nemo_gym.convert import output_turn
from rewardhub.api.compat.nemo_gym.servers import BASE_SERVERS, SERVERS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "compat.md"

_NO_TAGGER = (
    "IFBench's words:start_verb is NLTK's POS tagger, whose data (averaged_perceptron_tagger_eng) no registry "
    "package ships: where it is not installed the sample is an error naming it (masked), not a reward"
)
EXPLAINED: dict[tuple[str, int], tuple[str, str]] = {
    # (server, rollout index): (why it differs, a pattern the answer's error must show)
    ("ifbench", 1): (_NO_TAGGER, r"averaged_perceptron_tagger_eng\) is not on NLTK's data path"),
    ("ifbench", 4): (_NO_TAGGER, r"averaged_perceptron_tagger_eng\) is not on NLTK's data path"),
    ("mcqa", 2): (
        "recorded by an earlier release: 0.7.0's own verify() reads the box 'C: An individual...' as C and gives 1 "
        "(its 'letter then :' rule), as rewardhub's strict_single_letter_boxed does; the rollout says 0",
        r'"extracted": "C"',
    ),
}
"""Rollouts whose reward differs from the recorded one, and why (docs/compat.md lists the classes)."""


COLD_IMPORTS = {"reasoning_gym"}
"""Verifiers whose first sample in a worker imports a big library (reasoning-gym: seconds on a loaded
machine, inside the test service's 5 s sample limit). The workers are warmed first with the same
requests under a long limit, so that an import is not what the replay measures."""


def warm(http: httpx.Client, server: str, requests: list[dict[str, Any]]) -> None:
    spec = SERVERS[server].spec(requests[0])
    spec = {**spec, "config": {**spec["config"], "timeout_s": 60}}
    warmed = http.post(
        f"/v1/compat/nemo-gym/{server}/verify_batch",
        json={"verify_requests": [{**request, "verifier": spec} for request in requests]},
    )
    assert warmed.status_code == 200, warmed.text


def replay(http: httpx.Client, server: str) -> tuple[list[dict[str, Any]], list[float]]:
    shipped = built()["rollouts"][server]
    if server in COLD_IMPORTS:
        warm(http, server, shipped["requests"])
    answer = http.post(f"/v1/compat/nemo-gym/{server}/verify_batch", json={"verify_requests": shipped["requests"]})
    assert answer.status_code == 200, answer.text
    return answer.json()["verify_responses"], shipped["recorded"]


def agrees(answer: dict[str, Any], recorded: float) -> bool:
    """Judged (a masked sample is no reward, even when the recorded one is 0) and the same reward."""
    return answer["rewardhub"]["status"] == "ok" and answer["reward"] == pytest.approx(recorded, abs=1e-12)


@needs_nemo_gym
@pytest.mark.parametrize("server", sorted(BASE_SERVERS))
def test_each_server_gives_the_rewards_recorded_in_its_own_rollouts(
    http: httpx.Client, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    answers, recorded = replay(http, server)
    differ = [index for index, (a, r) in enumerate(zip(answers, recorded, strict=True)) if not agrees(a, r)]
    explained = {index: reason for (name, index), reason in EXPLAINED.items() if name == server}
    with capsys.disabled():
        print(
            f"\nNeMo-Gym {server}: {len(recorded)} rollouts, {len(recorded) - len(differ)} agree, {len(differ)} differ"
        )
        for index in differ:
            print(f"  rollout {index}: {explained.get(index, ('NOT EXPLAINED',))[0]}")
    unexplained = {
        i: (recorded[i], answers[i]["reward"], answers[i]["rewardhub"]) for i in differ if i not in explained
    }
    assert unexplained == {}
    for index, (why, shows) in explained.items():
        assert index in differ, f"rollout {index} now agrees: drop it from EXPLAINED ({why})"
        said = answers[index]["rewardhub"]["error"] or json.dumps(answers[index]["rewardhub"]["details"])
        assert re.search(shows, said), (why, answers[index]["rewardhub"])


@needs_nemo_gym
def test_the_servers_rows_are_joined_with_their_examples_where_the_rollouts_dropped_fields() -> None:
    shipped = built()["rollouts"]
    assert set(shipped) == set(BASE_SERVERS)
    # mcqa's rollouts keep no options, xlam's no expected answers: without the join no reward is 1
    assert shipped["mcqa"]["joined"] == len(shipped["mcqa"]["requests"])
    assert all(request["options"] for request in shipped["mcqa"]["requests"])
    assert all("expected_answers" in request for request in shipped["xlam_fc"]["requests"])
    for server, data in shipped.items():
        for request in data["requests"]:
            assert "reward" not in request and "extracted_answer" not in request, server


@needs_nemo_gym
def test_docs_list_every_server_with_its_agreement() -> None:
    section = DOCS.read_text().split("### NeMo-Gym resources servers", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \|.*?\| (\d+ / \d+ / \d+) \|", section, re.MULTILINE))
    assert set(rows) == set(BASE_SERVERS)
    for server, counts in rows.items():
        total = len(built()["rollouts"][server]["recorded"])
        explained = sum(name == server for name, _ in EXPLAINED)
        assert counts == f"{total} / {total - explained} / {explained}", server


# --- how a server's request is read -----------------------------------------------------------------


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


OUTPUT = [
    {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "think"}]},
    {"type": "function_call", "name": "get_weather", "arguments": '{"city": "Paris"}', "call_id": "c1"},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    message("It is "),
    message("sunny."),
]


@pytest.mark.parametrize(
    ("reading", "text"),
    [("output_text", "It is sunny."), ("last_item", "sunny."), ("assistant_lines", "It is \nsunny."), ("none", "")],
)
def test_the_output_is_one_turn_with_the_text_the_server_reads_and_every_call(reading: str, text: str) -> None:
    turn, skipped = output_turn(OUTPUT, reading)
    assert turn["content"] == text and skipped == []
    assert [call["function"]["name"] for call in turn["tool_calls"]] == ["get_weather"]
    assert turn["reasoning_content"] == "think"


def test_structured_outputs_schema_is_made_strict_as_the_server_makes_it() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    strict = SERVERS["structured_outputs"].reference({"schema_str": json.dumps(schema)})
    assert strict["required"] == ["a"] and strict["additionalProperties"] is False
    assert strict["properties"]["a"]["required"] == ["b"] and strict["properties"]["a"]["additionalProperties"] is False


def test_xlams_expected_answers_are_a_bfcl_possible_answer() -> None:
    expected = [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": '{"y": "z"}'}]
    assert SERVERS["xlam_fc"].reference({"expected_answers": expected}) == [{"f": {"x": [1]}}, {"g": {"y": ["z"]}}]
    # a dict (or a list of dicts) is written as BFCL writes an allowed dict: each key's values in a list
    nested = [{"name": "f", "arguments": {"d": {"a": 1}, "l": [{"b": 2}], "s": ["x"]}}]
    assert SERVERS["xlam_fc"].reference({"expected_answers": nested}) == [
        {"f": {"d": [{"a": [1]}], "l": [[{"b": [2]}]], "s": [["x"]]}}
    ]


def test_instruction_rows_read_verifier_metadata_first_and_grading_mode_sets_the_score() -> None:
    task = {
        "instruction_id_list": ["old"],
        "kwargs": [None],
        "verifier_metadata": {
            "instruction_id_list": ["new"],
            "kwargs": [{"n": 2, "m": None}],
            "grading_mode": "fraction",
        },
    }
    assert SERVERS["instruction_following"].reference(task)["instruction_id_list"] == ["new"]
    assert SERVERS["instruction_following"].reference(task)["kwargs"] == [{"n": 2}]  # nulls left out
    assert SERVERS["instruction_following"].spec(task)["config"]["mode"] == "fraction"
    assert SERVERS["instruction_following"].spec({})["config"]["mode"] == "all"  # the server's default: binary


def verify_request(output: list[dict[str, Any]], **task: Any) -> dict[str, Any]:
    return {"responses_create_params": {"input": "q"}, "response": {"output": output}, **task}


def test_a_servers_verify_answers_with_its_reward_and_says_where_rewardhub_differs(http: httpx.Client) -> None:
    options = [{"A": "one"}, {"B": "two"}]
    answer = http.post(
        "/v1/compat/nemo-gym/math_with_judge/verify",
        json=verify_request([message("So \\boxed{5}")], expected_answer="5", question="2+3?"),
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["reward"] == 1.0 and answer.json()["question"] == "2+3?"  # the request, echoed
    assert "LLM judge" in answer.json()["rewardhub"]["differs_from_server"]
    answer = http.post(
        "/v1/compat/nemo-gym/mcqa/verify",
        json=verify_request([message("So \\boxed{B}")], options=options, expected_answer="B"),
    )
    assert answer.json()["reward"] == 1.0 and answer.json()["options"] == options
    assert answer.json()["rewardhub"]["details"]["mode"] == "strict_single_letter_boxed"  # the server's default
    assert "differs_from_server" not in answer.json()["rewardhub"]


@pytest.mark.parametrize(
    ("row_mode", "server_mode", "reward"),
    [
        (None, "lenient_answer_colon", 1.0),  # the server's config names the mode
        ("strict_single_letter_boxed", "lenient_answer_colon", 1.0),  # and wins over the row's
        ("lenient_answer_colon", "strict_single_letter_boxed", 0.0),
        (None, "lenient_answer_colon_md", 1.0),
    ],
)
def test_mcqa_with_a_server_config_mode_reads_in_that_mode_whatever_the_row_says(
    http: httpx.Client, row_mode: str | None, server_mode: str, reward: float
) -> None:
    task: dict[str, Any] = {"options": [{"A": "one"}, {"B": "two"}], "expected_answer": "B"}
    if row_mode:
        task["grading_mode"] = row_mode
    answer = http.post(
        f"/v1/compat/nemo-gym/mcqa:{server_mode}/verify", json=verify_request([message("Answer: B")], **task)
    )
    assert answer.status_code == 200, answer.text
    assert (answer.json()["reward"], answer.json()["rewardhub"]["details"]["mode"]) == (reward, server_mode)


@pytest.mark.parametrize(
    ("server", "task", "text", "mode", "reward"),
    [
        # the row's grading_mode decides what counts as an answer
        ("mcqa", {}, "Answer: B", "strict_single_letter_boxed", 0.0),
        ("mcqa", {"grading_mode": "lenient_answer_colon"}, "Answer: B", "lenient_answer_colon", 1.0),
        ("mcqa", {"grading_mode": "lenient_answer_colon"}, "Answer: two", "lenient_answer_colon", 1.0),
        ("mcqa", {}, "\\boxed{[B]}", "strict_single_letter_boxed", 1.0),
        ("mcqa", {}, "\\boxed{two}", "strict_single_letter_boxed", 0.0),
        ("mcqa", {"grading_mode": "lenient_boxed"}, "\\boxed{two}", "lenient_boxed", 1.0),
        # the whole text is read: a box in a think block is the last box
        ("mcqa", {}, "\\boxed{A} <think>\\boxed{B}</think>", "strict_single_letter_boxed", 1.0),
        ("gpqa_diamond", {}, "**Answer:** B", "gpqa", 1.0),
        ("gpqa_diamond", {}, "\\boxed{The answer is B}", "gpqa", 1.0),
    ],
)
def test_mcqa_and_gpqa_read_the_answer_in_the_rows_grading_mode(
    http: httpx.Client, server: str, task: dict[str, Any], text: str, mode: str, reward: float
) -> None:
    options = [{"A": "one"}, {"B": "two"}]
    answer = http.post(
        f"/v1/compat/nemo-gym/{server}/verify",
        json=verify_request([message(text)], options=options, expected_answer="B", **task),
    )
    assert answer.status_code == 200, answer.text
    assert (answer.json()["reward"], answer.json()["rewardhub"]["details"]["mode"]) == (reward, mode)


@pytest.mark.parametrize(
    ("server", "task", "names"),
    [
        ("math_with_judge", {}, "expected_answer"),
        ("mcqa", {"expected_answer": "A"}, "options"),
        ("mcqa", {"options": [{"A": "x"}], "template_metadata": {"output_regex": "(A)"}}, "output_regex"),
        ("mcqa", {"options": [{"A": "x"}], "grading_mode": "loose"}, "grading_mode"),
        ("gpqa_diamond", {"template_metadata": {"output_regex": "(A)"}}, "output_regex"),
        ("structured_outputs", {"schema_str": "{}", "schema_type": "ini"}, "schema_type"),
        ("structured_outputs", {"schema_str": "{}", "response_mode": "voice"}, "response_mode"),
        ("structured_outputs", {"schema_str": "{"}, "schema_str"),
        ("xlam_fc", {"expected_answers": [{"arguments": {}}]}, "expected_answers"),
        ("instruction_following", {"kwargs": []}, "instruction_id_list"),
        ("xlam_fc", {"expected_answers": [], "reading": "bfcl"}, "reading"),
        ("structured_outputs", {"schema_str": "{}", "reading": "xlam_fc"}, "reading"),
    ],
)
def test_what_a_server_needs_and_does_not_get_is_a_422_naming_it(
    http: httpx.Client, server: str, task: dict[str, Any], names: str
) -> None:
    answer = http.post(f"/v1/compat/nemo-gym/{server}/verify", json=verify_request([message("x")], **task))
    assert answer.status_code == 422, answer.text
    assert names in answer.json()["error"]["message"]


def function_call(name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": "c1", "name": name, "arguments": arguments}


@pytest.mark.parametrize(
    ("arguments", "rewardhub", "server"),
    [
        ('{"city": "Paris", "days": 3}', 1.0, 1.0),
        ('{"city": "Paris", "days": 3, "units": "C"}', 0.0, 1.0),  # an argument xlam does not name
        ('{"city": "PARIS", "days": 3}', 1.0, 0.0),  # BFCL normalises strings; xlam compares exactly
        ('{"city": "Paris", "days": 3.0}', 0.0, 1.0),  # BFCL's type check; xlam: 3.0 == 3
        ('{"city": "Paris", "days": 4}', 0.0, 0.0),
    ],
)
def test_xlam_fc_gives_the_servers_reward_when_the_row_asks_for_its_reading(
    http: httpx.Client, arguments: str, rewardhub: float, server: float
) -> None:
    task = {"expected_answers": [{"name": "forecast", "arguments": {"city": "Paris", "days": 3}}]}
    for reading, reward in (("rewardhub", rewardhub), ("xlam_fc", server)):
        body = verify_request([function_call("forecast", arguments)], **task, reading=reading)
        answer = http.post("/v1/compat/nemo-gym/xlam_fc/verify", json=body).json()
        assert (answer["reward"], answer["rewardhub"]["reading"]) == (reward, reading), answer
        assert ("differs_from_server" in answer["rewardhub"]) is (reading == "rewardhub")
    assert answer["rewardhub"]["details"]["reading"] == "xlam_fc"
    default = http.post(
        "/v1/compat/nemo-gym/xlam_fc/verify", json=verify_request([function_call("forecast", arguments)], **task)
    )
    assert (default.json()["reward"], default.json()["rewardhub"]["reading"]) == (rewardhub, "rewardhub")


def test_structured_outputs_reads_a_think_block_as_text_when_the_row_asks_for_the_servers_reading(
    http: httpx.Client,
) -> None:
    schema = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})
    for reading, reward in (("rewardhub", 1.0), ("structured_outputs", 0.0)):
        body = verify_request([message('<think>an object</think>{"a": 1}')], schema_str=schema, reading=reading)
        answer = http.post("/v1/compat/nemo-gym/structured_outputs/verify", json=body).json()
        assert (answer["reward"], answer["rewardhub"]["reading"]) == (reward, reading), answer


ROW = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("schema_type", "schema", "text", "reward"),
    [
        ("yaml", ROW, "name: Ada\nage: 36\n", 1.0),
        ("yaml", ROW, "name: Ada\nage: thirty-six\n", 0.0),
        ("toml", ROW, 'name = "Ada"\nage = 36', 1.0),
        ("toml", ROW, '{"name": "Ada", "age": 36}', 0.0),  # JSON is not TOML
        # CSV's cells are typed by the schema's columns, as the server types them
        ("csv", {"type": "array", "items": ROW}, "name,age\nAda,36\nAlan,41\n", 1.0),
        ("csv", {"type": "array", "items": ROW}, "name,age\nAda,36.0\n", 0.0),
        ("csv", {"type": "array", "items": ROW}, "", 0.0),  # the server: an empty response is 0
        # XML as xmltodict reads it, the root element the one key, its text typed by the schema
        (
            "xml",
            {"type": "object", "properties": {"person": ROW}},
            "<person><name>Ada</name><age>36</age></person>",
            1.0,
        ),
        (
            "xml",
            {"type": "object", "properties": {"person": ROW}},
            "<person><name>Ada</name><age>36.0</age></person>",
            0.0,
        ),
        (
            "xml",
            {"type": "object", "properties": {"person": ROW}},
            '<person id="1"><name>Ada</name><age>36</age></person>',
            0.0,
        ),
        ("xml", ROW, "<person><name>Ada</name><age>36</age></person>", 0.0),  # the root is a key
    ],
)
def test_structured_outputs_reads_the_rows_schema_type(
    http: httpx.Client, schema_type: str, schema: dict[str, Any], text: str, reward: float
) -> None:
    body = verify_request([message(text)], schema_str=json.dumps(schema), schema_type=schema_type)
    answer = http.post("/v1/compat/nemo-gym/structured_outputs/verify", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["reward"] == reward, answer.json()["rewardhub"]
    assert answer.json()["rewardhub"]["details"]["syntax"] == schema_type


@pytest.mark.parametrize(
    ("task", "output", "reward"),
    [
        ({}, [function_call("submit", '{"name": "Ada", "age": 36}')], 1.0),
        ({}, [function_call("submit", '{"name": "Ada"}')], 0.0),
        ({}, [message('{"name": "Ada", "age": 36}')], 0.0),  # no call: the text is not read
        ({}, [function_call("a", '{"name": "Ada", "age": 36}')] * 2, 0.0),  # one call, not two
        ({"tool_name": "submit"}, [function_call("lookup", '{"name": "Ada", "age": 36}')], 0.0),
        ({"tool_payload_key": "row"}, [function_call("submit", '{"row": {"name": "Ada", "age": 36}}')], 1.0),
        ({"tool_payload_key": "row"}, [function_call("submit", '{"name": "Ada", "age": 36}')], 0.0),
        ({}, [function_call("submit", '{"name": "<think>Ada</think>", "age": 36}')], 1.0),  # a value, not a block
    ],
)
def test_structured_outputs_in_tool_call_mode_validates_the_one_calls_arguments(
    http: httpx.Client, task: dict[str, Any], output: list[dict[str, Any]], reward: float
) -> None:
    body = verify_request(output, schema_str=json.dumps(ROW), response_mode="tool_call", **task)
    answer = http.post("/v1/compat/nemo-gym/structured_outputs/verify", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["reward"] == reward, answer.json()["rewardhub"]
