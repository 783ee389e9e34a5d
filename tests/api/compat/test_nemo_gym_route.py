"""``/v1/compat/nemo-gym/{verifier}``: a NeMo-Gym resources server, spoken with NeMo-Gym's released models.

The requests are built by NeMo-Gym's own request models (nemo-gym 0.7.0, in a child process: see
``nemo_gym_side.py``), posted to a running service, and the answers are read back with NeMo-Gym's
response models; ``/aggregate_metrics`` is compared with NeMo-Gym's own aggregation of the same
answers.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from nemo_gym_support import built, needs_nemo_gym, nemo_gym

from rewardhub.api.compat.nemo_gym.convert import NemoGymVerifyRequest, to_messages, to_sample

BASE = "/v1/compat/nemo-gym"


def requests() -> dict[str, Any]:
    return built()["requests"]


def verify(http: httpx.Client, verifier: str, body: dict[str, Any]) -> httpx.Response:
    return http.post(f"{BASE}/{verifier}/verify", json=body)


# --- the conversion: Responses-API items as OpenAI chat messages -------------------------------


def convert(input: Any, output: list[dict[str, Any]], **params: Any) -> list[dict[str, Any]]:
    body = NemoGymVerifyRequest.model_validate(
        {"responses_create_params": {"input": input, **params}, "response": {"output": output}}
    )
    return to_messages(body.responses_create_params, body.response.output)[0]


def text(value: str, id: str = "msg") -> dict[str, Any]:
    return {"id": id, "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": value}]}


def call(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}


def test_a_string_input_is_a_user_turn_and_instructions_a_system_turn() -> None:
    assert convert("2+3?", [text("5")], instructions="Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "content": "5"},
    ]


def test_reasoning_goes_to_the_next_assistant_turn_not_its_answer() -> None:
    reasoning = {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "add them"}]}
    assert convert("2+3?", [reasoning, text("5")])[-1] == {
        "role": "assistant",
        "content": "5",
        "reasoning_content": "add them",
    }


def test_a_tool_calling_trajectory_becomes_calls_and_tool_results() -> None:
    output = [
        call("get_weather", '{"city": "Paris"}', "c1"),
        call("get_time", '{"city": "Paris"}', "c2"),
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "c2", "output": "noon"},
        text("Sunny at noon."),
    ]
    messages = convert([{"role": "user", "content": "Paris?"}], output)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["get_weather", "get_time"]
    assert messages[1]["tool_calls"][0] == {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    assert messages[2] == {"role": "tool", "content": "sunny", "tool_call_id": "c1"}
    sample = to_sample(
        NemoGymVerifyRequest.model_validate(
            {"responses_create_params": {"input": "Paris?"}, "response": {"output": output}, "expected_answer": "x"}
        )
    )
    assert sample.response == "Sunny at noon." and sample.reference == "x"


def test_items_no_verifier_reads_are_skipped_and_named() -> None:
    body = NemoGymVerifyRequest.model_validate(
        {
            "responses_create_params": {"input": "q"},
            "response": {"output": [{"type": "web_search_call", "id": "w", "status": "completed"}, text("a")]},
        }
    )
    assert to_sample(body).metadata == {"nemo_gym": {"skipped_items": ["web_search_call"]}}


# --- the service, with NeMo-Gym's own request models ---------------------------------------------


@needs_nemo_gym
@pytest.mark.parametrize(
    ("name", "verifier", "reward"),
    [
        ("math_right", "math", 1.0),
        ("math_wrong", "math", 0.0),
        ("ifeval_right", "ifeval", 1.0),
        ("ifeval_wrong", "ifeval", 0.0),
        ("mcqa_right", "choice", 1.0),
        ("plain", "length", None),
    ],
)
def test_task_fields_reach_the_verifier(http: httpx.Client, name: str, verifier: str, reward: float | None) -> None:
    body = requests()[name]
    answer = verify(http, verifier, body)
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert got["rewardhub"]["status"] == "ok", got["rewardhub"]
    if reward is not None:
        assert got["reward"] == reward
    assert {k: v for k, v in got.items() if k not in {"reward", "rewardhub"}} == body  # the request, echoed


@needs_nemo_gym
def test_structured_tool_calls_are_judged(http: httpx.Client) -> None:
    assert verify(http, "tool_call", requests()["tool_right"]).json()["reward"] == 1.0
    assert verify(http, "tool_call", requests()["tool_malformed"]).json()["reward"] == 0.0


@needs_nemo_gym
def test_answers_are_nemo_gyms_response_models_and_metrics_agree(http: httpx.Client) -> None:
    built = requests()
    composite = {
        "sum": [{"verifier": "math", "weight": 0.8}, {"verifier": {"name": "format"}, "weight": 0.2}],
    }
    answers = {
        "math_right": verify(http, "math", built["math_right"]).json(),
        "math_wrong": verify(http, "math", built["math_wrong"]).json(),
        "composite": verify(http, "math", {**built["math_right"], "verifier": composite}).json(),
        "unjudged": verify(http, "math", {**built["plain"], "expected_answer": "\\frac{"}).json(),
        "ifeval": verify(http, "ifeval", built["ifeval_right"]).json(),
    }
    assert set(answers["composite"]["reward_components"]) == {"math", "format"}
    assert answers["unjudged"]["mask_sample"] is True and answers["unjudged"]["failure_reason"]
    # Two tasks of two rollouts (two repeats), one task of one, and the unjudged one: masked
    layout = {"math_right": (0, 0), "math_wrong": (0, 1), "composite": (1, 0), "ifeval": (1, 1), "unjudged": (2, 0)}
    rollouts = [
        {
            **{k: v for k, v in answers[name].items() if k != "rewardhub"},
            "_ng_task_index": task,
            "_ng_rollout_index": repeat,
        }
        for name, (task, repeat) in layout.items()
    ]
    ours = http.post(f"{BASE}/math/aggregate_metrics", json={"verify_responses": rollouts})
    assert ours.status_code == 200, ours.text
    theirs = nemo_gym("check", {"verify": answers, "aggregate": rollouts})

    assert theirs["validated"]["composite"]["model"] == "BaseMultiRewardVerifyResponse"
    assert {n: v["reward"] for n, v in theirs["validated"].items()} == {n: a["reward"] for n, a in answers.items()}
    assert theirs["validated"]["unjudged"]["mask_sample"] is True
    for block in ("agent_metrics", "key_metrics"):
        mine = ours.json()[block]
        shared = {k: theirs["aggregate"][block][k] for k in mine if k in theirs["aggregate"][block]}
        assert set(shared) == set(mine), set(mine) - set(shared)
        assert mine == pytest.approx(shared)
        missing = sorted(set(theirs["aggregate"][block]) - set(mine))
        print(f"\n{block}: {len(shared)}/{len(mine)} keys equal NeMo-Gym's; NeMo-Gym also has {missing}")
    groups = zip(ours.json()["group_level_metrics"], theirs["aggregate"]["group_level_metrics"], strict=True)
    for mine, their in groups:
        assert mine == pytest.approx({k: their[k] for k in mine}), mine["_ng_task_index"]
    measured = [answers[name]["reward"] for name in ("math_right", "math_wrong", "composite", "ifeval")]
    assert ours.json()["agent_metrics"]["mean/reward"] == pytest.approx(sum(measured) / 4)
    assert "mean/output_tokens" in ours.json()["agent_metrics"] and "mean/id" in ours.json()["agent_metrics"]
    assert ours.json()["agent_metrics"]["coverage/masked_rollouts"] == 1


# --- bad input: a 4xx with the reason, and the service keeps serving ----------------------------


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[]", 422),
        (b'{"responses_create_params": {"input": "q"}, "response": {"output": []}, "expected_answer": NaN}', 422),
        ({"response": {"output": []}}, 422),
        ({"responses_create_params": {"input": "q"}, "response": {"output": "text"}}, 422),
        ({"responses_create_params": {"input": "q"}, "response": {"output": [{"role": "x"}]}}, 422),
        ({"responses_create_params": {"input": "q"}, "response": {"output": [{"text": "no type"}]}}, 422),
        (
            {
                "responses_create_params": {"input": "q"},
                "response": {"output": [{"type": "function_call_output", "call_id": "c", "output": "orphan"}]},
            },
            422,
        ),
        (
            {
                "responses_create_params": {"input": "q"},
                "response": {"output": [{"type": "message", "content": [{"type": "input_image", "image_url": "x"}]}]},
            },
            422,
        ),
        ({"responses_create_params": {"input": "q"}, "response": {"output": [call("", "{}", "c")]}}, 422),
        ({"responses_create_params": {"input": "q"}, "response": {"output": [text("a")]}, "verifier": 5}, 422),
        ({"responses_create_params": {"input": [1, 2]}, "response": {"output": [text("a")]}}, 422),
        (
            {"responses_create_params": {"input": "q"}, "response": {"output": [{"type": "message", "content": {}}]}},
            422,
        ),
        ({"responses_create_params": {"input": "q"}, "response": {"output": [call("f", "{}", 7)]}}, 422),
        (
            {
                "responses_create_params": {"input": "q"},
                "response": {"output": [{**call("f", "{}", "c"), "arguments": 3}]},
            },
            422,
        ),
        (
            {
                "responses_create_params": {"input": "q"},
                "response": {
                    "output": [call("f", "{}", "c"), {"type": "function_call_output", "call_id": "c", "output": [5]}]
                },
            },
            422,
        ),
        (
            {
                "responses_create_params": {"input": "q"},
                "response": {
                    "output": [call("f", "{}", "c"), {"type": "function_call_output", "call_id": "zz", "output": "x"}]
                },
            },
            422,
        ),
        (
            {
                "responses_create_params": {"input": [{"role": "tool", "content": "x"}]},
                "response": {"output": [text("a")]},
            },
            422,
        ),
    ],
)
def test_bad_requests_are_4xx_and_the_service_keeps_serving(http: httpx.Client, body: Any, status: int) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = http.post(f"{BASE}/exact/verify", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["message"]
    assert (
        verify(
            http,
            "exact",
            {"responses_create_params": {"input": "q"}, "response": {"output": [text("a")]}, "expected_answer": "a"},
        ).json()["reward"]
        == 1.0
    )


def test_unknown_verifier_is_404_and_huge_bodies_413(http: httpx.Client) -> None:
    body = {"responses_create_params": {"input": "q"}, "response": {"output": [text("a")]}}
    assert verify(http, "no_such_verifier", body).status_code == 404
    huge = {**body, "response": {"output": [text("x" * 10_000_000)]}}
    assert verify(http, "exact", huge).status_code == 413


def test_malformed_arguments_are_the_policys_zero_not_a_4xx(http: httpx.Client) -> None:
    body = {
        "responses_create_params": {"input": "q"},
        "response": {"output": [call("get_weather", '{"city": ', "c1")]},
        "expected_call": {"name": "get_weather", "arguments": {"city": "Paris"}},
    }
    answer = verify(http, "tool_call", body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["reward"] == 0.0


def test_a_batch_is_answered_in_order_each_as_verify_answers_it(http: httpx.Client) -> None:
    bodies = [
        {"responses_create_params": {"input": "q"}, "response": {"output": [text(answer)]}, "expected_answer": "a"}
        for answer in ("a", "b", "a")
    ]
    bodies[2]["verifier"] = {"name": "exact", "config": {"case_sensitive": True}}
    batch = http.post(f"{BASE}/exact/verify_batch", json={"verify_requests": bodies})
    assert batch.status_code == 200, batch.text
    answers = batch.json()["verify_responses"]
    assert [a["reward"] for a in answers] == [1.0, 0.0, 1.0]
    one = verify(http, "exact", bodies[1]).json()
    assert answers[1] == one
    assert {k: v for k, v in answers[2].items() if k not in {"reward", "rewardhub"}} == bodies[2]


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"verify_requests": []}, "verify_requests"),
        ({"verify_requests": [{"responses_create_params": {"input": "q"}, "response": {"output": []}}, {}]}, "[1]"),
        ({"requests": []}, "requests"),
    ],
)
def test_a_batch_that_is_not_one_is_a_422_naming_the_request(http: httpx.Client, body: Any, names: str) -> None:
    answer = http.post(f"{BASE}/exact/verify_batch", json=body)
    assert answer.status_code == 422, answer.text
    assert names in json.dumps(answer.json()["error"])


def test_aggregate_metrics_refuses_what_is_not_a_list_of_responses(http: httpx.Client) -> None:
    assert http.post(f"{BASE}/math/aggregate_metrics", json={"verify_responses": 3}).status_code == 422
    assert http.post(f"{BASE}/math/aggregate_metrics", json={"verify_responses": []}).json()["agent_metrics"] == {}
