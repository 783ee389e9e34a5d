"""A sample may carry a conversation: OpenAI chat messages beside or instead of ``response``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rewardhub.types import ChatMessage, Sample


def call(name: str, arguments: Any = "{}", id: str | None = "c1") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


TRAJECTORY = [
    {"role": "system", "content": "You can call tools."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [call("get_weather", '{"city": "Paris"}')]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 C, sunny"},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 18 C "}, {"type": "text", "text": "and sunny."}]},
]


def test_without_a_response_the_last_assistant_turn_is_the_response() -> None:
    sample = Sample.model_validate({"messages": TRAJECTORY})
    assert sample.response == "It is 18 C and sunny."
    assert sample.final_turn().content == "It is 18 C and sunny."
    assert [turn.role for turn in sample.conversation()] == ["system", "user", "assistant", "tool", "assistant"]
    assert len(sample.assistant_turns()) == 2


def test_a_response_beside_messages_is_the_final_text() -> None:
    messages = [{"role": "assistant", "content": "draft", "tool_calls": [call("f")]}]
    sample = Sample.model_validate({"response": "final", "messages": messages})
    assert sample.response == "final"
    assert sample.final_turn().content == "final"
    assert sample.final_turn().tool_calls[0].function.name == "f"


def test_messages_without_a_user_turn_follow_the_prompt() -> None:
    sample = Sample.model_validate({"prompt": "2+2?", "messages": [{"role": "assistant", "content": "4"}]})
    assert [(t.role, t.content) for t in sample.conversation()] == [("user", "2+2?"), ("assistant", "4")]


def test_a_plain_sample_is_still_one_prompt_and_one_response() -> None:
    sample = Sample(prompt="q", response="a")
    assert sample.messages is None
    assert [(t.role, t.content) for t in sample.conversation()] == [("user", "q"), ("assistant", "a")]
    assert sample.final_turn() == ChatMessage(role="assistant", content="a")


def test_arguments_may_be_a_json_string_a_dict_or_even_malformed() -> None:
    for arguments in ('{"a": 1}', {"a": 1}, "{not json"):
        messages = [{"role": "assistant", "content": "", "tool_calls": [call("f", arguments)]}]
        assert Sample.model_validate({"messages": messages}).final_turn().tool_calls[0].function.arguments == arguments


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        ([{"role": "robot", "content": "hi"}], "literal_error"),
        ([{"role": "user", "content": "hi"}], "no assistant turn"),
        (
            [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}, {"role": "assistant", "content": "a"}],
            "without an assistant turn",
        ),
        (
            [
                {"role": "assistant", "content": "a", "tool_calls": [call("f")]},
                {"role": "tool", "tool_call_id": "zz", "content": "r"},
            ],
            "which no call made",
        ),
        (
            [
                {"role": "assistant", "content": "", "tool_calls": [call("f")]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"},
                {"role": "tool", "tool_call_id": "c1", "content": "r"},
            ],
            "tool result 2",
        ),
        (
            [{"role": "user", "content": "q", "tool_calls": [call("f")]}, {"role": "assistant", "content": "a"}],
            "only an assistant turn makes tool_calls",
        ),
        ([{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], "cannot be scored"),
        (
            [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "", "arguments": "{}"}}]}],
            "string_too_short",
        ),
        ([{"role": "assistant", "content": "", "tool_calls": [call("f", 42)]}], "arguments"),
    ],
)
def test_a_broken_conversation_is_refused_with_the_reason(messages: list[dict[str, Any]], reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        Sample.model_validate({"messages": messages})


def test_a_sample_needs_a_response_or_messages() -> None:
    with pytest.raises(ValidationError, match="needs a response"):
        Sample.model_validate({"prompt": "q"})


def test_a_conversation_travels_unchanged_through_json() -> None:
    """What the client sends, the worker (local or Celery) receives: the same sample."""
    sample = Sample.model_validate({"id": "s", "messages": TRAJECTORY, "reference": [], "group": "g"})
    again = Sample.model_validate_json(sample.model_dump_json(exclude_none=True))
    assert again == sample and again.response == "It is 18 C and sunny."
