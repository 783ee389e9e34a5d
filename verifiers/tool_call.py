"""``tool_call``: the last assistant turn calls the expected tools with the expected arguments.

A turn-level reward for agentic RL. The calls are read from the sample's last assistant turn
(:mod:`rewardhub.verifiers.call_reading`): structured OpenAI ``tool_calls`` when a conversation
carries them, else the text (Hermes ``<tool_call>`` tags, JSON, or Python call syntax).

``reference`` takes two shapes:

- **BFCL's possible answer** ``[{function_name: {param: [allowed values]}}, ...]`` (``""`` among the
  values: the parameter may be omitted; ``[]``: no call is expected), or
  ``{"possible_answer": [...], "functions": [function descriptions]}`` to add the declared types
  and required parameters. Judged by BFCL's rules (:mod:`rewardhub.verifiers.bfcl_match`): every
  expected call made once, in any order, no extra call; an unexpected parameter, a missing
  required one, a wrong type, a value not allowed or arguments that cannot be read score 0, with
  the reason in ``details``. With ``partial_credit``, the score is the share of calls matched
  (matched / the larger of expected and made).
- **One expected call** ``{"name": str, "arguments": {...}?, "schema": {...}?}`` (``parameters``
  may stand for ``schema``, as in an OpenAI function definition). A call passes when its name is
  equal, its arguments validate against ``schema`` and every expected argument has the expected
  value (extra arguments are the schema's business). Strings compare case- and
  whitespace-insensitively unless ``string_match="exact"``; numbers by value, never ``True == 1``.
  With ``partial_credit``, a call with the right name earns the weighted share of schema validity
  and of the expected arguments it got right; a wrong name is always 0. With several calls, the
  best one counts, except that calling the expected tool several times with different arguments
  scores 0 (``reason: extra_calls``): spraying every plausible argument is a hedge, not an answer.
  ``extra_calls`` sets that policy ("reject": any second distinct call scores 0; "allow": the best
  call counts whatever else was called).

``reading: "xlam_fc"`` asks for NeMo-Gym's xlam_fc server's reading instead of BFCL's rules, for a
``reference`` that is xlam's ``expected_answers`` (``[{"name", "arguments"}]``): each expected call
is matched, in order, to the first unmatched call of that name whose arguments hold every expected
argument equal by Python's ``==`` (``45.0 == 45``, strings exactly; other arguments ignored, arguments
that cannot be read are none), and the score is 1 when every expected call is matched and no other
call was made. ``details.reading`` names it.

It does not run the tools, and does not judge whether calling them was wise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .bfcl_match import Expected, match_calls, parse_functions, parse_possible_answer
from .call_reading import ParsedCall, calls_in_text, calls_in_turn
from .json_schema import load_schema, schema_errors

__all__ = ["ExpectedCall", "ToolCallVerifier", "extract_calls", "judge_bfcl", "values_match"]


class ExpectedCall(BaseModel):
    """The ``reference`` of a sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    json_schema: Any = Field(None, alias="schema")
    parameters: Any = None

    @model_validator(mode="after")
    def _one_schema(self) -> ExpectedCall:
        if self.json_schema is not None and self.parameters is not None:
            raise ValueError("give 'schema' or 'parameters', not both")
        return self

    @property
    def arguments_schema(self) -> Any:
        return self.json_schema if self.json_schema is not None else self.parameters


def extract_calls(response: str) -> list[ParsedCall]:
    """Every tool call written in a response text, malformed ones included."""
    return calls_in_text(response)


def values_match(expected: Any, actual: Any, normalise_strings: bool = True) -> bool:
    """Structural equality of JSON values; ``True`` is not ``1``, and strings may be normalised."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, str) and isinstance(actual, str):
        return _norm(expected) == _norm(actual) if normalise_strings else expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            values_match(v, actual[k], normalise_strings) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            values_match(e, a, normalise_strings) for e, a in zip(expected, actual, strict=True)
        )
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        return expected == actual
    return type(expected) is type(actual) and expected == actual


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class Verdict:
    score: float
    details: dict[str, Any]


class ToolCallVerifier(Verifier):
    """The response calls the reference's tool with arguments that validate and match the expected values."""

    name = "tool_call"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        partial_credit: bool = Field(
            False,
            description="BFCL answers: the share of calls matched. One expected call: a right-name call's weighted "
            "share of schema validity and matching arguments.",
        )
        schema_weight: float = Field(
            0.5, ge=0, description="partial_credit: weight of 'arguments validate against the schema'."
        )
        arguments_weight: float = Field(
            0.5,
            ge=0,
            description="partial_credit: weight of the fraction of expected arguments with the expected value.",
        )
        string_match: Literal["normalised", "exact"] = Field(
            "normalised",
            description="One expected call: string values compare case/whitespace-insensitively, or exactly. "
            "BFCL answers always use BFCL's normalisation.",
        )
        extra_calls: Literal["other_tools", "reject", "allow"] = Field(
            "other_tools",
            description="'other_tools': calls to other tools are ignored, but the expected tool called with different "
            "arguments more than once scores 0; 'reject': any second distinct call scores 0; 'allow': the best call "
            "counts.",
        )
        reading: Literal["rewardhub", "xlam_fc"] = Field(
            "rewardhub",
            description="'xlam_fc': NeMo-Gym's xlam_fc server's reading, asked for where rewardhub's differs: the "
            "reference is its expected_answers, arguments compare by ==, extra arguments are ignored. "
            "details.reading names it.",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        calls = calls_in_turn(sample.final_turn())
        if config.reading == "xlam_fc":
            return judge_xlam(calls, _xlam_expected(sample.reference))
        bfcl = _possible_answer(sample.reference)
        if bfcl is not None:
            return judge_bfcl(calls, bfcl, config.partial_credit)
        expected = _expected(sample.reference)
        schema = load_schema(expected.arguments_schema) if expected.arguments_schema is not None else None
        if not calls:
            return Result.ok(0.0, calls_found=0)
        hedged = _hedged_calls(calls, expected.name, config.extra_calls)
        if hedged:
            return Result.ok(0.0, calls_found=len(calls), reason="extra_calls", distinct_calls=hedged)
        verdicts = [judge_call(call, expected, schema, config) for call in calls]
        best = max(verdicts, key=lambda v: (v.score, v.details["name_ok"]))  # on a tie, the right tool explains more
        malformed = sum(call.name is None for call in calls)
        return Result.ok(best.score, calls_found=len(calls), malformed_calls=malformed, best_call=best.details)


def _hedged_calls(calls: list[ParsedCall], expected_name: str, policy: str) -> int:
    """The number of distinct calls that make a hedge under ``policy`` (0 when there is none)."""
    if policy == "allow":
        return 0
    counted = calls if policy == "reject" else [call for call in calls if call.name == expected_name]
    distinct = {(call.name, json.dumps(call.arguments, sort_keys=True, default=str)) for call in counted}
    return len(distinct) if len(distinct) > 1 else 0


def judge_bfcl(calls: list[ParsedCall], expected: list[Expected], partial_credit: bool = False) -> Result:
    """All expected calls made, each once, in any order, and nothing else: 1, else 0 with the reasons."""
    assignment, problems = match_calls(calls, expected)
    matched = sum(index is not None for index in assignment)
    if partial_credit:
        score = matched / max(len(expected), len(calls)) if expected or calls else 1.0
    else:
        score = float(not problems)
    return Result.ok(
        score,
        format="bfcl",
        calls_found=len(calls),
        calls_expected=len(expected),
        calls_matched=matched,
        reason=problems[0].code if problems else None,
        errors=[problem.message for problem in problems[:10]],
        calls=[{"name": call.name, "problem": call.problem} for call in calls[:20]],
    )


def judge_xlam(calls: list[ParsedCall], expected: list[tuple[str, dict[str, Any]]]) -> Result:
    """NeMo-Gym xlam_fc's ``_calculate_reward``: expected calls matched greedily, 1 when all are and
    nothing else was called."""
    unmatched = list(range(len(calls)))
    for name, arguments in expected:
        for i in unmatched:
            made = calls[i].arguments or {}
            if calls[i].name == name and all(k in made and made[k] == v for k, v in arguments.items()):
                unmatched.remove(i)
                break
    matched = len(calls) - len(unmatched)
    score = float(matched == len(expected) == len(calls))
    return Result.ok(
        score, reading="xlam_fc", calls_found=len(calls), calls_expected=len(expected), calls_matched=matched
    )


def _xlam_expected(reference: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(reference, list) or not all(
        isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("arguments", {}), dict)
        for call in reference
    ):
        raise VerifierError("reading 'xlam_fc' takes xlam's expected_answers: [{'name': str, 'arguments': {...}}]")
    return [(call["name"], call.get("arguments", {})) for call in reference]


def _possible_answer(reference: Any) -> list[Expected] | None:
    """The reference as BFCL's possible answer, or None when it is one expected call instead."""
    if isinstance(reference, list):
        answer, functions = reference, None
    elif isinstance(reference, dict) and "possible_answer" in reference:
        unknown = set(reference) - {"possible_answer", "functions"}
        if unknown:
            raise VerifierError(f"unknown keys in a possible-answer reference: {sorted(unknown)}")
        answer, functions = reference["possible_answer"], reference.get("functions")
    else:
        return None
    try:
        return parse_possible_answer(answer, parse_functions(functions))
    except ValueError as exc:
        raise VerifierError(f"malformed tool_call reference: {exc}") from None


def _expected(reference: Any) -> ExpectedCall:
    if not isinstance(reference, dict):
        raise VerifierError(
            "reference must be a BFCL possible answer [{name: {param: [values]}}] or one expected call {'name': ...}"
        )
    try:
        return ExpectedCall.model_validate(reference)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise VerifierError(f"malformed tool_call reference at {first['loc']}: {first['msg']}") from None


def judge_call(call: ParsedCall, expected: ExpectedCall, schema: Any, config: ToolCallVerifier.Config) -> Verdict:
    details: dict[str, Any] = {"name": call.name, "name_ok": call.name == expected.name}
    if not details["name_ok"]:
        return Verdict(0.0, details)
    parts: list[tuple[float, float]] = []  # (weight, credit)
    if schema is not None:
        errors = (
            schema_errors(call.arguments, schema)
            if call.arguments is not None
            else [{"path": "/", "message": "arguments are missing or not a JSON object"}]
        )
        details.update(schema_ok=not errors, schema_errors=errors[:5])
        parts.append((config.schema_weight, float(not errors)))
    if expected.arguments:
        actual = call.arguments or {}
        normalise = config.string_match == "normalised"
        wrong = [
            k for k, v in expected.arguments.items() if k not in actual or not values_match(v, actual[k], normalise)
        ]
        details.update(arguments_matched=len(expected.arguments) - len(wrong), arguments_wrong=wrong)
        parts.append((config.arguments_weight, 1 - len(wrong) / len(expected.arguments)))
    if not config.partial_credit:
        return Verdict(float(all(credit == 1.0 for _, credit in parts)), details)
    total = sum(weight for weight, _ in parts)
    return Verdict(sum(w * c for w, c in parts) / total if total else 1.0, details)
