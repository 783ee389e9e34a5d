"""slime: the custom reward function, called as slime calls it (one sample, or a group)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from rewardhub.integrations.slime import reward, slime_payload


def slime_sample(response: str, label: Any, index: int = 0, **metadata: Any) -> SimpleNamespace:
    """The attributes of slime's ``Sample`` that a reward function reads."""
    return SimpleNamespace(prompt="What is 2+2?", response=response, label=label, index=index, metadata=metadata)


@pytest.fixture(autouse=True)
def service(service_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_URL", service_url)
    monkeypatch.setenv("REWARDHUB_VERIFIER", "exact")


def test_one_sample_gets_a_reward_object_with_selectable_numbers() -> None:
    out = asyncio.run(reward(SimpleNamespace(), slime_sample("4", "4")))
    assert (out["score"], out["reward"], out["acc"], out["status/ok"]) == (1.0, 1.0, 1.0, 1.0)
    assert out["status"] == "ok"


def test_a_group_is_scored_in_one_request_as_a_group() -> None:
    group = [slime_sample(str(i), "x", index=i, verifier="test_group_size") for i in range(3)]
    out = asyncio.run(reward(SimpleNamespace(), group))
    assert [o["score"] for o in out] == [3.0, 3.0, 3.0]  # the group verifier saw all three


def test_a_sample_that_cannot_be_judged_is_flagged() -> None:
    out = asyncio.run(reward(SimpleNamespace(), slime_sample("4", None)))
    assert out["status"] == "error" and out["status/error"] == 1.0 and out["acc"] == 0.0 and out["error"]


def test_metadata_names_the_verifier_and_chat_prompts_are_sent_as_slime_holds_them() -> None:
    sample = slime_sample("A", "a", verifier={"name": "exact", "config": {"case_sensitive": True}}, source="mmlu")
    sample.prompt = [{"role": "user", "content": [{"type": "text", "text": "Pick"}]}]
    payload = slime_payload(sample)
    assert payload["verifier"] == {"name": "exact", "config": {"case_sensitive": True}}
    assert payload["metadata"] == {"source": "mmlu"} and payload["prompt"] == sample.prompt
    assert asyncio.run(reward(SimpleNamespace(), sample))["score"] == 0.0


def test_without_a_verifier_in_the_metadata_the_environment_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert slime_payload(slime_sample("4", "4"))["verifier"] == "exact"
    monkeypatch.delenv("REWARDHUB_VERIFIER")
    assert slime_payload(slime_sample("4", "4"))["verifier"] == "math"


def test_a_trajectory_recorded_in_metadata_is_scored_as_a_conversation() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "calc", "arguments": '{"e": "2+2"}'}}
    turns = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "4"},
        {"role": "assistant", "content": "4"},
    ]
    sample = slime_sample("<tool_call>calc</tool_call>4 and the tool said 4", "4", messages=turns, source="agent")
    assert asyncio.run(reward(SimpleNamespace(), sample))["score"] == 1.0  # exact on the last assistant turn
