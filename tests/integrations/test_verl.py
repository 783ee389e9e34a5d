"""verl: compute_score routed by data_source, called the way verl's reward managers call it."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from rewardhub.integrations import verl
from rewardhub.integrations.verl import (
    UnroutedDataSource,
    compute_score,
    compute_score_async,
    compute_score_batch,
    route,
)

FIXED_KEYS = {"score", "acc", "status", "error", "status/ok", "status/timeout", "status/error", "components"}


@pytest.mark.parametrize(
    ("data_source", "verifier"),
    [
        ("openai/gsm8k", "math"),
        ("lighteval/MATH", "math"),
        ("DigitalLearningGmbH/MATH-lighteval", "math"),
        ("HuggingFaceH4/MATH-500", "math"),
        ("math_dapo", "math"),
        ("math_dapo_reasoning", "math"),
        ("aime24", "math"),
        ("aime_2025", "math"),
        ("numina_aops_forum", "math"),
        ("numina_cn_k12", "math"),
        ("numina_olympiads", "math"),
        ("hiyouga/geometry3k", "math"),
        ("codecontests", "code"),
        ("apps", "code"),
        ("taco", "code"),
        ("codeforces", "code"),
        ("searchR1_nq", "qa_match"),
        ("gpqa_diamond", "choice"),
    ],
)
def test_verls_data_sources_route_to_rewardhub_verifiers(data_source: str, verifier: str) -> None:
    assert route(data_source) == verifier


def test_an_unknown_data_source_raises_like_verl_does() -> None:
    with pytest.raises(NotImplementedError) as caught:
        route("my_private_set")
    assert isinstance(caught.value, UnroutedDataSource)


def test_extra_routes_come_first() -> None:
    assert route("openai/gsm8k", {"openai/gsm8k": "exact"}) == "exact"


def test_compute_score_as_the_naive_manager_calls_it(service_url: str) -> None:
    # verl: compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=..., **reward_kwargs)
    kwargs = {"url": service_url, "routes": {"my_qa": "exact"}}
    right = compute_score(
        data_source="my_qa", solution_str="Paris", ground_truth="paris", extra_info={"index": 3}, **kwargs
    )
    wrong = compute_score(data_source="my_qa", solution_str="Lyon", ground_truth="paris", extra_info=None, **kwargs)
    assert (right["score"], right["acc"], right["status"]) == (1.0, 1.0, "ok")
    assert (wrong["score"], wrong["acc"]) == (0.0, 0.0)
    assert set(right) == set(wrong) == FIXED_KEYS


def test_a_sample_that_cannot_be_judged_keeps_the_keys_and_says_why(service_url: str) -> None:
    out = compute_score("my_qa", "Paris", None, url=service_url, routes={"my_qa": "exact"})
    assert set(out) == FIXED_KEYS
    assert out["status"] == "error" and out["status/error"] == 1.0 and out["error"]
    assert out["score"] == 0.0 and out["acc"] == 0.0  # the failure score, flagged, never a silent judgement


def test_async_variant_is_a_coroutine_function_verl_awaits(service_url: str) -> None:
    assert inspect.iscoroutinefunction(compute_score_async)  # how verl decides to await it
    out = asyncio.run(compute_score_async("q", "Paris", "paris", {}, url=service_url, verifier="exact"))
    assert out["score"] == 1.0
    again = asyncio.run(compute_score_async("q", "Rome", "paris", {}, url=service_url, verifier="exact"))
    assert again["score"] == 0.0  # another event loop, another client


def test_batched_variant_scores_mixed_sources_in_one_call(service_url: str) -> None:
    routes = {"ci": "exact", "cs": {"name": "exact", "config": {"case_sensitive": True}}}
    # verl's batch manager: compute_score(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)
    out = compute_score_batch(
        data_sources=np.array(["ci", "cs", "cs"], dtype=object),
        solution_strs=["PARIS", "PARIS", "Paris"],
        ground_truths=[np.str_("paris"), "paris", "Paris"],
        extra_infos=[{"index": np.int64(i)} for i in range(3)],
        url=service_url,
        routes=routes,
    )
    assert [o["score"] for o in out] == [1.0, 0.0, 1.0]
    assert len({frozenset(o) for o in out}) == 1  # verl appends each key per sample: same keys for all


def test_batched_variant_exports_component_scores(service_url: str) -> None:
    spec = {"sum": [{"verifier": "exact", "weight": 0.5}, {"verifier": "format", "weight": 0.5}]}
    out = compute_score_batch(
        ["a", "a"], ["<think>x</think>yes", "no"], ["yes", "yes"], None, url=service_url, verifier=spec
    )
    assert [o["component/exact"] for o in out] == [1.0, 0.0]
    assert [o["component/format"] for o in out] == [1.0, 0.0]
    assert json.loads(out[0]["components"])["format"]["score"] == 1.0


def test_results_aggregate_the_way_verl_aggregates_them(service_url: str) -> None:
    """verl's managers collect ``reward_extra_info[key].append(value)`` over the batch."""
    collected: dict[str, list[Any]] = defaultdict(list)
    for solution in ["paris", "rome", "paris"]:
        for key, value in compute_score("x", solution, "paris", url=service_url, verifier="exact").items():
            collected[key].append(value)
    assert {len(values) for values in collected.values()} == {3}
    numeric = {k: v for k, v in collected.items() if not isinstance(v[0], str)}
    assert math.isclose(float(np.mean(numeric["acc"])), 2 / 3)


def test_ground_truth_from_parquet_is_plain_json() -> None:
    sample, spec = verl._sample("apps", "print(1)", {"inputs": np.array(["1"]), "n": np.int64(2)}, None, None, None)
    assert sample.reference == {"inputs": ["1"], "n": 2} and spec == "code"


def test_a_multi_turn_rollout_is_scored_as_a_conversation(service_url: str) -> None:
    """An agent loop's extra fields reach compute_score in extra_info; read from parquet, they are numpy arrays."""
    call = {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": '{"expr": "6*7"}'}}
    trajectory = np.array(
        [
            {"role": "user", "content": "6*7?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
            {"role": "assistant", "content": "It is \\boxed{42}."},
        ],
        dtype=object,
    )
    kwargs = {"url": service_url, "routes": {"agent_math": "math"}}
    decoded = "<tool_call>...</tool_call> tool tokens and It is \\boxed{42}. with a wrong \\boxed{41}"
    out = compute_score("agent_math", decoded, "42", extra_info={"messages": trajectory, "num_turns": 4}, **kwargs)
    assert (out["score"], out["status"]) == (1.0, "ok")  # the last assistant turn, not the decoded tokens
    sequence = {"url": service_url, "verifier": {"name": "tool_sequence", "config": {"forbidden": ["calc"]}}}
    assert compute_score("agent_math", decoded, "42", extra_info={"messages": trajectory}, **sequence)["score"] == 0.0
