"""slime's remote RM protocol, the server side, against a real service (its get_reward_verifier: exact)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rewardhub.api.compat.slime import SlimeRequest, slime_sample
from rewardhub.errors import InvalidRequest

# --- slime ----------------------------------------------------------------------------------------


def slime(http: httpx.Client, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/compat/slime", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_slime_payload_gets_numbers_its_reward_key_can_select(http: httpx.Client) -> None:
    out = slime(http, prompt="2+2?", response="4", label="4")  # the service's get_reward_verifier: exact
    assert {k: out[k] for k in ("score", "reward", "acc", "status/ok", "status")} == {
        "score": 1.0,
        "reward": 1.0,
        "acc": 1.0,
        "status/ok": 1.0,
        "status": "ok",
    }


def test_slime_verifier_comes_from_the_body_or_the_metadata(http: httpx.Client) -> None:
    strict = {"name": "exact", "config": {"case_sensitive": True}}
    assert slime(http, response="A", label="a", verifier=strict)["score"] == 0.0
    assert slime(http, response="A", label="a", metadata={"verifier": strict})["score"] == 0.0
    assert slime(http, response="A", label="a")["score"] == 1.0


def test_slime_chat_prompt_and_composite_components(http: httpx.Client) -> None:
    spec = {"sum": [{"verifier": "exact", "weight": 0.5}, {"verifier": "format", "weight": 0.5}]}
    out = slime(
        http, prompt=[{"role": "user", "content": "hi"}], response="<think>x</think>a", label="a", verifier=spec
    )
    assert (out["score"], out["component/exact"], out["component/format"]) == (1.0, 1.0, 1.0)


def test_slime_sample_that_cannot_be_judged_answers_its_status(http: httpx.Client) -> None:
    out = slime(http, response="4", label=None)
    assert out["status"] == "error" and out["status/error"] == 1.0 and out["error"]


def test_slime_refuses_unknown_fields(http: httpx.Client) -> None:
    response = http.post("/v1/compat/slime", json={"response": "4", "label": "4", "surprise": 1})
    assert response.status_code == 422 and response.json()["error"]["type"] == "invalid_request"


def test_a_batch_is_answered_in_order_and_a_group_batch_is_one_group(http: httpx.Client) -> None:
    samples = [{"response": str(i), "label": "x", "verifier": "test_group_size"} for i in range(3)]
    grouped = http.post("/v1/compat/slime/batch", json={"samples": samples, "group": True}).json()["rewards"]
    assert [r["score"] for r in grouped] == [3.0, 3.0, 3.0]  # the group verifier saw all three
    plain = http.post(
        "/v1/compat/slime/batch", json={"samples": [{"response": "4", "label": "4"}, {"response": "5", "label": "4"}]}
    )
    assert [r["score"] for r in plain.json()["rewards"]] == [1.0, 0.0]


def test_a_trajectory_in_the_metadata_is_read_as_a_conversation() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "calc", "arguments": '{"e": "2+2"}'}}
    turns = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "4"},
        {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
    ]
    body = SlimeRequest(response="ignored", label="4", metadata={"messages": turns, "source": "agent"}, index=7)
    sample = slime_sample(body)
    assert sample.id == "7" and sample.response == "4" and len(sample.messages) == 3  # the last assistant turn
    assert sample.messages[2].content == "4" and sample.metadata == {"source": "agent"}


def test_a_malformed_trajectory_is_refused_naming_the_sample(http: httpx.Client) -> None:
    with pytest.raises(InvalidRequest, match=r"samples\[2\]: message 0 is a str"):
        slime_sample(SlimeRequest(response="x", metadata={"messages": ["not a message"]}), 2)
    bad = {"samples": [{"response": "x", "metadata": {"messages": ["not a message"]}}]}
    answer = http.post("/v1/compat/slime/batch", json=bad)
    assert answer.status_code == 422 and "samples[0]: message 0" in answer.text
    assert slime(http, response="4", label="4")["score"] == 1.0  # and the service keeps serving
