"""`math` does not pay an answer denied or contradicted inside the box.

falsepass 0.11.0's P15 probe ("hedged in the answer slot") found two replies that named the gold and
took it back, both paid in full through the service: ``\\boxed{49 = 42}`` (a false chain of constants,
read as its last side) and ``\\boxed{42 \\text{ is wrong}}`` (the denial dropped as if it were a unit).
A chain that holds and a real unit are read as before.
"""

from __future__ import annotations

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.math import MathVerifier


def score(response: str, reference: str) -> float:
    result = MathVerifier().score(Sample(response=response, reference=reference), MathVerifier.Config())
    assert result.status == "ok", result.error
    return result.score


@pytest.mark.parametrize(
    "response, reference",
    [
        ("The answer is $\\boxed{49 = 42}$.", "42"),  # P15 false_equation
        ("The answer is $\\boxed{42 = 49}$.", "42"),  # P15 false_equation_reversed
        ("The answer is $\\boxed{42 \\text{ is wrong}}$.", "42"),  # P15 denied_latex
        ("\\boxed{42 \\text{ is not correct}}", "42"),
        ("\\boxed{42 \\text{ (not the answer)}}", "42"),
        ("\\boxed{\\frac{1}{2} = \\frac{10}{9}}", "\\frac{10}{9}"),
    ],
)
def test_an_answer_taken_back_in_the_box_scores_0(response: str, reference: str) -> None:
    assert score(response, reference) == 0.0


@pytest.mark.parametrize(
    "response, reference",
    [
        ("\\boxed{35 + 70 = 105}", "105"),  # a chain that holds states its last side
        ("\\boxed{2\\pi = 6.28}", "6.28"),  # equal up to the rounding shown
        ("\\boxed{x = 42}", "42"),
        ("\\boxed{42 \\text{ cm}}", "42"),
        ("\\boxed{42 \\text{ square feet}}", "42"),
        ("\\boxed{0.06 \\text{ yuan}}", "0.06"),
        ("The answer is 125 miles.", "125"),
    ],
)
def test_a_true_chain_and_a_unit_are_read_as_before(response: str, reference: str) -> None:
    assert score(response, reference) == 1.0
