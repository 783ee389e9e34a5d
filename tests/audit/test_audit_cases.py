"""Labelled cases at the edge: response or messages, a strict expectation, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from rewardhub.audit import AuditCase, transcript_text
from rewardhub.audit.command import read_cases, verifier_spec
from rewardhub.errors import InvalidRequest
from rewardhub.types import VerifierRef


def test_a_case_scores_its_response() -> None:
    case = AuditCase(response="\\boxed{2}", reference="2", expected=True)
    assert case.sample().response == "\\boxed{2}" and case.label(1.0)


def test_messages_are_read_as_the_last_assistant_turn_with_its_tool_calls() -> None:
    messages = [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": "draft"},
        {"role": "tool", "content": "{}", "tool_call_id": "1"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Calling."}],
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
            ],
        },
    ]
    text = transcript_text(messages)
    assert text == 'Calling.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    assert AuditCase(messages=messages, reference={"name": "get_weather"}, expected=1).sample().response == text


@pytest.mark.parametrize(
    "fields",
    [
        {"reference": "2", "expected": True},  # no response
        {"response": "2", "messages": [{"role": "assistant", "content": "2"}], "reference": "2", "expected": True},
        {"messages": [{"role": "user", "content": "2"}], "reference": "2", "expected": True},  # no assistant turn
        {"response": "2", "reference": "2", "expected": "yes"},  # not a bool or a number
        {"response": "2", "reference": "2", "expected": float("nan")},
        {"response": "2", "reference": "2"},  # no label
        {"response": "2", "reference": "2", "expected": True, "surprise": 1},
    ],
)
def test_malformed_cases_are_refused(fields: dict) -> None:
    with pytest.raises(ValidationError):
        AuditCase.model_validate(fields)


def test_a_cases_file_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"response": "1", "reference": "1", "expected": True, "source": "mine"}) + "\n\n{not json\n"
    )
    with pytest.raises(InvalidRequest, match=r"cases.jsonl:3"):
        read_cases(path)
    path.write_text(json.dumps({"response": "1", "reference": "1", "expected": True, "source": "mine"}) + "\n")
    [case] = read_cases(path)
    assert case.metadata == {"source": "mine"}  # extra fields of a file ride along, as in `rewardhub score`


def test_verifier_argument_takes_a_name_a_config_or_a_spec() -> None:
    assert verifier_spec("math", None) == "math"
    assert verifier_spec("math", '{"strict": true}') == VerifierRef(name="math", config={"strict": True})
    assert verifier_spec('{"name": "math"}', None) == VerifierRef(name="math")
    with pytest.raises(InvalidRequest):
        verifier_spec('{"sum": []}', '{"strict": true}')
    with pytest.raises(InvalidRequest):
        verifier_spec("math", "{oops")
