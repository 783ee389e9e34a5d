"""Conversations over HTTP: trajectories are scored through the real service and the Python client,
and every kind of broken trajectory is a 4xx or a per-sample error, never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from rewardhub.client import AsyncRewardClient, RewardClient
from rewardhub.server import EmbeddedServer
from rewardhub.types import Sample

CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
TRAJECTORY = [
    {"role": "system", "content": "Use the tools."},
    {"role": "user", "content": "Weather in Paris? Answer in \\boxed{}."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "It is \\boxed{sunny}."},
]
FIRST_TURN = TRAJECTORY[:3]
POSSIBLE = [{"get_weather": {"city": ["paris"], "unit": ["", "celsius"]}}]


def score(http: httpx.Client, samples: list[dict[str, Any]], verifier: Any) -> httpx.Response:
    return http.post("/v1/score", json={"verifier": verifier, "samples": samples})


def test_a_trajectory_is_scored_by_rule_tool_and_trajectory_verifiers(http: httpx.Client) -> None:
    cases = [
        ("exact", {"messages": TRAJECTORY, "reference": "It is \\boxed{sunny}."}, 1.0),
        ("tool_call", {"messages": FIRST_TURN, "reference": POSSIBLE}, 1.0),
        ("tool_call", {"messages": TRAJECTORY, "reference": []}, 1.0),  # the final turn calls nothing
        (
            {"name": "tool_sequence", "config": {"required": ["get_weather"], "max_calls": 1}},
            {"messages": TRAJECTORY},
            1.0,
        ),
    ]
    for verifier, sample, expected in cases:
        response = score(http, [sample], verifier)
        assert response.status_code == 200, response.text
        [result] = response.json()["results"]
        assert (result["status"], result["score"]) == ("ok", expected), (verifier, result)


def test_steps_come_back_one_per_assistant_turn(http: httpx.Client) -> None:
    verifier = {"name": "steps", "config": {"turn": {"name": "tool_call"}}}
    sample = {"messages": TRAJECTORY, "reference": {"turns": [POSSIBLE, []]}}
    [result] = score(http, [sample], verifier).json()["results"]
    assert (result["status"], result["steps"], result["score"]) == ("ok", [1.0, 1.0], 1.0)


def test_the_client_passes_conversations_through(service_url: str) -> None:
    sample = Sample.model_validate({"messages": FIRST_TURN, "reference": POSSIBLE})
    with RewardClient(service_url) as client:
        [typed] = client.score([sample], "tool_call")
        [plain] = client.score([{"messages": FIRST_TURN, "reference": POSSIBLE}], "tool_call")
    assert typed.score == plain.score == 1.0
    assert typed.details["calls"] == [{"name": "get_weather", "problem": None}]


async def test_the_async_client_passes_conversations_through(service_url: str) -> None:
    async with AsyncRewardClient(service_url) as client:
        [result] = await client.score([{"messages": TRAJECTORY, "reference": "sunny"}], "math")
    assert (result.status, result.score) == ("ok", 1.0)


def with_turn(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "q"}, turn]


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        (with_turn({"role": "wizard", "content": "x"}), "role"),
        (
            [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}, {"role": "assistant", "content": "a"}],
            "tool result",
        ),
        (
            [
                {"role": "assistant", "content": "", "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "zz", "content": "r"},
            ],
            "tool_call_id",
        ),
        (
            with_turn(
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": 7}}]}
            ),
            "arguments",
        ),
        (
            with_turn({"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}),
            "content part",
        ),
        ([{"role": "user", "content": "only a question"}], "no assistant turn"),
        (with_turn({"role": "assistant", "content": "a", "unknown": 1}), "unknown"),
        ("not a list", "messages"),
    ],
    ids=[
        "wrong-role",
        "result-without-call",
        "unknown-call-id",
        "numeric-arguments",
        "image",
        "no-assistant",
        "extra-field",
        "not-a-list",
    ],
)
def test_a_broken_conversation_is_422_naming_the_problem(http: httpx.Client, messages: Any, where: str) -> None:
    response = score(http, [{"messages": messages}], "exact")
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request"
    assert where in json.dumps(error["detail"]), error


def test_arguments_that_are_not_json_are_the_policys_mistake_scored_zero(http: httpx.Client) -> None:
    bad = {**CALL, "function": {"name": "get_weather", "arguments": "{city: Paris"}}
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [bad]}]
    [result] = score(http, [{"messages": messages, "reference": POSSIBLE}], "tool_call").json()["results"]
    assert (result["status"], result["score"], result["details"]["reason"]) == ("ok", 0.0, "malformed_arguments")


def test_a_bad_reference_is_a_per_sample_error_beside_good_samples(http: httpx.Client) -> None:
    samples = [
        {"messages": FIRST_TURN, "reference": POSSIBLE},
        {"messages": FIRST_TURN, "reference": [{"get_weather": {"city": "paris"}}]},
        {
            "messages": TRAJECTORY,
            "reference": {"turns": [POSSIBLE]},
            "verifier": {"name": "steps", "config": {"turn": {"name": "tool_call"}}},
        },
    ]
    results = score(http, samples, "tool_call").json()["results"]
    assert [r["status"] for r in results] == ["ok", "error", "error"]
    assert "allowed values" in results[1]["error"] and "one reference per assistant turn" in results[2]["error"]


def test_ten_megabytes_of_content_is_413_and_the_service_keeps_serving(http: httpx.Client) -> None:
    huge = with_turn({"role": "assistant", "content": "x" * (10 * 1024 * 1024)})
    response = score(http, [{"messages": huge}], "exact")
    assert response.status_code == 413 and response.json()["error"]["type"] == "payload_too_large"
    assert http.get("/healthz").json()["status"] == "ok"


REFERENCES = {
    json.dumps("tool_call"): POSSIBLE,
    json.dumps({"name": "tool_sequence", "config": {"max_calls": 3}}): None,
}


@pytest.fixture(scope="module")
def roomy_service() -> Iterator[str]:
    """A service whose body limit lets 10 MB through: what reaches the verifiers must not break them."""
    with EmbeddedServer(workers=1, sample_timeout_s=20.0, max_request_bytes=32 * 1024 * 1024) as url:
        yield url


@pytest.mark.parametrize(
    "verifier",
    [
        "exact",
        "math",
        "tool_call",
        {"name": "tool_sequence", "config": {"max_calls": 3}},
        {"name": "steps", "config": {"turn": {"name": "regex", "config": {"pattern": "x"}}}},
    ],
    ids=["exact", "math", "tool_call", "tool_sequence", "steps"],
)
def test_ten_megabytes_that_get_in_are_judged_or_a_per_sample_error(roomy_service: str, verifier: Any) -> None:
    payloads = [
        "x" * (10 * 1024 * 1024),
        "<tool_call>" * (1024 * 1024),
        "f(" * (1024 * 1024),
    ]
    with httpx.Client(base_url=roomy_service, timeout=120) as http:
        for content in payloads:
            messages = [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "c1", "content": content},
                {"role": "assistant", "content": content},
            ]
            response = score(
                http, [{"messages": messages, "reference": REFERENCES.get(json.dumps(verifier), "x")}], verifier
            )
            assert response.status_code == 200, response.text[:500]
            [result] = response.json()["results"]
            assert result["status"] in ("ok", "error", "timeout")
            assert result["status"] == "ok" or result["error"]
        assert http.get("/healthz").status_code == 200
