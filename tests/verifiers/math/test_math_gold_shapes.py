"""Golds read as a careful grader reads them (issue 39): a gold boxed in several parts is answered
part by part, in order, never by its last box alone; a sentence in a gold's box states the answer
after its lead-in, and a contest's choice label with the option's content is that choice."""

from __future__ import annotations

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.math.verifier import MathVerifier

VERIFIER = MathVerifier()

TWO_PARTS = "(a) The area is $\\boxed{12}$. (b) The perimeter is $\\boxed{14}$."


def verdict(gold: str, response: str) -> float:
    result = VERIFIER.score(Sample(response=response, reference=gold), MathVerifier.Config())
    assert result.status == "ok", result
    return result.score


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("So the perimeter is \\boxed{14}.", 0.0),  # only the last part: part (a) is unanswered
        ("So the area is \\boxed{12}.", 0.0),
        ("(a) area \\boxed{12}. (b) perimeter \\boxed{14}.", 1.0),
        ("**Part (a).** ... $\\boxed{12}$\n\n**Part (b).** ... $\\boxed{14}$", 1.0),
        ("(a) \\boxed{14}. (b) \\boxed{12}.", 0.0),  # the parts' order is the question's
        ("\\boxed{12, 14}", 1.0),  # every part, in order, in one box
        ("\\boxed{14, 12}", 0.0),
        ("\\boxed{\\{12, 14\\}}", 0.0),  # a set has no part (a)
        ("(a) \\boxed{12}. (b) \\boxed{15}.", 0.0),
        ("(a) first try \\boxed{10}, then (a) \\boxed{12}. (b) \\boxed{14}.", 1.0),  # the last box of each part
        ("(a) \\boxed{14}. Wait, no: \\boxed{12}.", 0.0),  # a box taken back is no second part
    ],
)
def test_a_gold_in_parts_is_answered_part_by_part(response: str, expected: float) -> None:
    assert verdict(TWO_PARTS, response) == expected


def test_a_part_that_is_a_list_keeps_its_own_order_rule() -> None:
    gold = "(a) The roots are $\\boxed{1, 2}$. (b) Their product is $\\boxed{2}$."
    assert verdict(gold, "(a) \\boxed{2, 1} (b) \\boxed{2}") == 1.0  # roots: any order
    assert verdict(gold, "\\boxed{2}") == 0.0
    assert verdict(gold, "\\boxed{1, 2, 2}") == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        # a worked solution that boxes its one answer again is one answer
        ("so it is \\boxed{840}. Checking the sum once more,\n**Final Answer**\n\\boxed{840}", "\\boxed{840}", 1.0),
        # a gold that takes a box back answers with its last box, as a response does
        ("\\boxed{1} no no no no no \\boxed{2}", "\\boxed{2}", 1.0),
        ("\\boxed{1} no no no no no \\boxed{2}", "\\boxed{1, 2}", 0.0),
        # boxes a list joins are one list answer, as before
        ("$x = \\boxed{2}$ or $x = \\boxed{3}$", "\\boxed{3, 2}", 1.0),
    ],
)
def test_repeated_and_revised_boxes_are_one_answer(gold: str, response: str, expected: float) -> None:
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\\boxed{\\text{The final answer is (B) 1}}", "\\boxed{1}", 1.0),
        ("\\boxed{\\text{The final answer is (B) 1}}", "\\boxed{B}", 1.0),
        ("\\boxed{\\text{The final answer is (B) 1}}", "\\boxed{(B)}", 1.0),
        ("\\boxed{\\text{The final answer is (B) 1}}", "\\boxed{2}", 0.0),
        ("\\boxed{\\text{The final answer is (B) 1}}", "\\boxed{C}", 0.0),
        ("The final answer is (B) 1", "\\boxed{1}", 1.0),
        ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "\\boxed{0.75}", 1.0),
        ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "\\boxed{4}", 0.0),
        ("\\text{Answer: } 17", "\\boxed{17}", 1.0),
        ("\\text{(B)}\\ 1", "\\boxed{1}", 1.0),
        ("\\text{(B)}\\ 1", "\\boxed{B}", 1.0),
        ("\\text{(B)}\\ 1", "\\boxed{2}", 0.0),
        ("\\text{(B)}\\ 1", "\\boxed{(D)}", 0.0),
        ("\\textbf{(C) }\\frac{1}{2}", "\\boxed{\\frac{1}{2}}", 1.0),
        ("\\textbf{(C) }\\frac{1}{2}", "\\boxed{\\textbf{(C) }\\frac{1}{2}}", 1.0),
        ("\\textbf{(C) }\\frac{1}{2}", "\\boxed{\\textbf{(A) }\\frac{1}{2}}", 0.0),  # the option's letter is wrong
    ],
)
def test_a_sentence_in_the_gold_states_its_answer(gold: str, response: str, expected: float) -> None:
    assert verdict(gold, response) == expected


def test_what_was_read_is_shown_part_by_part() -> None:
    result = VERIFIER.score(
        Sample(response="(a) \\boxed{12} (b) \\boxed{14}", reference=TWO_PARTS), MathVerifier.Config()
    )
    assert (result.details["gold"], result.details["answer"], result.score) == ("12; 14", "12; 14", 1.0)


def test_a_box_inside_the_reasoning_answers_only_when_the_whole_text_is_read() -> None:
    """rewardhub's reading skips a leading <think> block; ``strip_think: false`` reads the whole text,
    as NeMo-Gym's math_with_judge does (its compat route sets it)."""
    response = "<think>It is \\boxed{904}.</think>\nSo the answer is 904."
    whole = MathVerifier.Config(anchors=["boxed"], unanchored=False, strip_think=False)
    after = MathVerifier.Config(anchors=["boxed"], unanchored=False)
    assert VERIFIER.score(Sample(response=response, reference="904"), whole).score == 1.0
    assert VERIFIER.score(Sample(response=response, reference="904"), after).score == 0.0
