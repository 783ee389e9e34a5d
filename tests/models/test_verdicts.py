"""Verdicts are read from a fixed place, never found by substring."""

from __future__ import annotations

import math

import pytest

from rewardhub.models.errors import VerdictError
from rewardhub.models.verdicts import (
    choice_verdict,
    expected_grade,
    last_line_grade,
    last_line_verdict,
    verdict_probability,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answers match.\nTrue", True),
        ("They differ.\nFalse", False),
        ("**True**", True),
        ("Verdict: False.", False),
        ("Final answer: TRUE", True),
        ("\\boxed{True}", True),
        ("reasoning\n\nTrue\n\n", True),
    ],
)
def test_last_line_verdicts(text: str, expected: bool) -> None:
    assert last_line_verdict(text) is expected


@pytest.mark.parametrize(
    "text",
    [
        "not true",
        "The statement is not true",
        "It is True",
        "True or False",
        "True\nActually, no.",
        "Untrue",
        "",
        "   \n  ",
        "Trueish",
    ],
)
def test_anything_else_is_an_error_not_a_verdict(text: str) -> None:
    with pytest.raises(VerdictError):
        last_line_verdict(text)


def test_choices_must_be_the_whole_output() -> None:
    assert choice_verdict(" True ", ["True", "False"]) == "True"
    assert choice_verdict("false.", ["True", "False"]) == "False"
    with pytest.raises(VerdictError):
        choice_verdict("True, mostly", ["True", "False"])


def test_verdict_probability_by_hand() -> None:
    first = (("True", math.log(0.6)), (" true", math.log(0.1)), ("False", math.log(0.2)), ("Maybe", math.log(0.1)))
    # (0.6 + 0.1) / (0.6 + 0.1 + 0.2)
    assert verdict_probability(first) == pytest.approx(0.7 / 0.9)


def test_verdict_probability_needs_a_verdict_token() -> None:
    with pytest.raises(VerdictError):
        verdict_probability((("The", -0.1), ("not", -2.0)))


@pytest.mark.parametrize(("text", "grade"), [("Good.\nScore: 7", 7.0), ("8/10", 8.0), ("**Rating: 3.5**", 3.5)])
def test_grades(text: str, grade: float) -> None:
    assert last_line_grade(text, 1, 10) == grade


@pytest.mark.parametrize("text", ["Score: 11", "I'd give it a 7", "Score: seven", "7 or 8"])
def test_bad_grades_are_errors(text: str) -> None:
    with pytest.raises(VerdictError):
        last_line_grade(text, 1, 10)


def test_expected_grade_by_hand() -> None:
    first = (("7", math.log(0.5)), ("8", math.log(0.25)), ("x", math.log(0.25)))
    # (7·0.5 + 8·0.25) / 0.75
    assert expected_grade(first, 0, 9) == pytest.approx((3.5 + 2.0) / 0.75)
