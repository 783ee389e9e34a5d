"""Trajectory verifiers: ``steps`` (one reward per assistant turn), ``tool_sequence`` (which tools,
in what order, how many), and rule verifiers judging a trajectory's final answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardhub.errors import VerifierError
from rewardhub.registry import Registry
from rewardhub.types import Result, Sample
from rewardhub.verifiers.steps import StepsVerifier
from rewardhub.verifiers.tool_sequence import ToolSequenceVerifier


def assistant_calls(*calls: tuple[str, dict[str, Any]], content: str = "") -> dict[str, Any]:
    tool_calls = [
        {"id": f"{name}-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    return {"role": "assistant", "content": content, "tool_calls": tool_calls}


def results_for(turn: dict[str, Any], *outputs: str) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": call["id"], "content": out}
        for call, out in zip(turn["tool_calls"], outputs, strict=True)
    ]


SEARCH = assistant_calls(("search", {"query": "capital of France"}))
LOOKUP = assistant_calls(("lookup", {"page": "Paris"}), ("lookup", {"page": "France"}))
TRAJECTORY = [
    {"role": "system", "content": "Use the tools, then answer in \\boxed{}."},
    {"role": "user", "content": "What is the capital of France?"},
    SEARCH,
    *results_for(SEARCH, "Paris is the capital of France."),
    LOOKUP,
    *results_for(LOOKUP, "Paris: city", "France: country"),
    {"role": "assistant", "content": "The capital is \\boxed{Paris}."},
]


def run(verifier: Any, sample: dict[str, Any], **config: Any) -> Result:
    return verifier.score(Sample.model_validate(sample), verifier.Config(**config))


# --- steps ------------------------------------------------------------------------------------------


def test_steps_gives_one_reward_per_assistant_turn() -> None:
    reference = {
        "turns": [
            [{"search": {"query": ["capital of France"]}}],
            [{"lookup": {"page": ["France"]}}, {"lookup": {"page": ["Paris"]}}],
            [],
        ]
    }
    result = run(StepsVerifier(), {"messages": TRAJECTORY, "reference": reference}, turn={"name": "tool_call"})
    assert result.steps == [1.0, 1.0, 1.0]
    assert result.score == 1.0


def test_a_wrong_turn_costs_only_its_own_step() -> None:
    reference = {"turns": [[{"search": {"query": ["weather"]}}], [{"lookup": {"page": ["Paris"]}}], []]}
    result = run(StepsVerifier(), {"messages": TRAJECTORY, "reference": reference}, turn={"name": "tool_call"})
    assert result.steps == [0.0, 0.0, 1.0]
    assert result.details["turns"][0]["details"]["reason"] == "value_error"
    assert result.details["turns"][1]["details"]["reason"] == "extra_call"
    assert result.score == pytest.approx(1 / 3)


@pytest.mark.parametrize(("how", "score"), [("mean", 0.5), ("min", 0.0), ("last", 1.0), ("sum", 1.0)])
def test_steps_aggregate_as_configured(how: str, score: float) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "thinking"},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "<think>ok</think>done"},
    ]
    config = {"turn": {"name": "regex", "config": {"pattern": "done"}}, "aggregate": how}
    result = run(StepsVerifier(), {"messages": messages}, **config)
    assert (result.steps, result.score) == ([0.0, 1.0], score)


def test_a_reference_list_of_the_wrong_length_is_an_error_not_a_zero() -> None:
    with pytest.raises(VerifierError, match="one reference per assistant turn: 3, got 1"):
        run(StepsVerifier(), {"messages": TRAJECTORY, "reference": {"turns": [[]]}}, turn={"name": "tool_call"})


def test_a_turn_that_cannot_be_judged_names_the_turn() -> None:
    with pytest.raises(VerifierError, match="assistant turn 0"):
        run(StepsVerifier(), {"messages": TRAJECTORY, "reference": {"turns": [5, 5, 5]}}, turn={"name": "tool_call"})


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        ({"name": "nope"}, "unknown verifier"),
        ({"name": "judge"}, "rule verifier"),
        ({"name": "steps"}, "rule verifier"),
        ({"name": "regex", "config": {"patern": "x"}}, "invalid config"),
    ],
)
def test_steps_refuses_a_turn_verifier_it_cannot_run(turn: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StepsVerifier.Config(turn=turn)


def test_a_plain_response_is_one_step() -> None:
    result = run(StepsVerifier(), {"response": "\\boxed{4}", "reference": "4"}, turn={"name": "math"})
    assert result.steps == [1.0]


# --- tool_sequence ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "broken"),
    [
        ({"required": ["search", "lookup"]}, []),
        ({"required": ["search", "calculator"]}, ["required"]),
        ({"forbidden": ["delete_account"]}, []),
        ({"forbidden": ["lookup"]}, ["forbidden"]),
        ({"order": ["search", "lookup"]}, []),
        ({"order": ["search", "lookup", "lookup"]}, []),
        ({"order": ["lookup", "search"]}, ["order"]),
        ({"order": ["search", "search"]}, ["order"]),
        ({"max_calls": 3}, []),
        ({"max_calls": 2}, ["max_calls"]),
        ({"min_calls": 4}, ["min_calls"]),
        ({"required": ["search"], "forbidden": ["lookup"], "max_calls": 1}, ["forbidden", "max_calls"]),
    ],
)
def test_tool_sequence_rules(rules: dict[str, Any], broken: list[str]) -> None:
    result = run(ToolSequenceVerifier(), {"messages": TRAJECTORY, "reference": rules})
    assert [v["rule"] for v in result.details["violations"]] == broken
    assert result.score == float(not broken)
    assert result.details["calls"] == ["search", "lookup", "lookup"]


def test_tool_sequence_partial_credit_is_the_share_of_rules_kept() -> None:
    rules = {"required": ["search"], "forbidden": ["lookup"], "max_calls": 1, "order": ["search"]}
    result = run(ToolSequenceVerifier(), {"messages": TRAJECTORY, "reference": rules}, partial_credit=True)
    assert result.score == 0.5


def test_config_rules_apply_to_every_sample_and_the_reference_overrides_them() -> None:
    verifier = ToolSequenceVerifier()
    assert run(verifier, {"messages": TRAJECTORY}, max_calls=2).score == 0.0
    assert run(verifier, {"messages": TRAJECTORY, "reference": {"max_calls": 5}}, max_calls=2).score == 1.0


def test_calls_written_in_text_count_too() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": '<tool_call>{"name": "search", "arguments": {}}</tool_call>'},
        {"role": "tool", "content": "result"},
        {"role": "assistant", "content": "[lookup(page='Paris'), rm_rf()]"},
        {"role": "tool", "content": "r1"},
        {"role": "tool", "content": "r2"},
        {"role": "assistant", "content": "Paris."},
    ]
    result = run(ToolSequenceVerifier(), {"messages": messages, "reference": {"forbidden": ["rm_rf"]}})
    assert result.details["calls"] == ["search", "lookup", "rm_rf"]
    assert result.score == 0.0


@pytest.mark.parametrize(
    ("reference", "message"),
    [(None, "no rule to check"), (["search"], "object of rules"), ({"max_calls": -1}, "malformed tool_sequence")],
)
def test_tool_sequence_needs_rules_it_can_read(reference: Any, message: str) -> None:
    with pytest.raises(VerifierError, match=message):
        run(ToolSequenceVerifier(), {"messages": TRAJECTORY, "reference": reference})


# --- the final answer of a trajectory -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reference"), [("math", "Paris"), ("exact", "The capital is \\boxed{Paris}."), ("regex", None)]
)
def test_any_rule_verifier_judges_the_final_answer(name: str, reference: Any) -> None:
    registry = Registry.load()
    verifier = registry.get(name)
    config = registry.validate_config(name, {"pattern": "boxed\\{Paris\\}"} if name == "regex" else {})
    result = verifier.score(Sample.model_validate({"messages": TRAJECTORY, "reference": reference}), config)
    assert Result.model_validate(result if isinstance(result, Result) else {"score": result}).score == 1.0


def test_the_tools_are_registered() -> None:
    names = Registry.load().names()
    assert {"steps", "tool_sequence", "tool_call"} <= set(names)
