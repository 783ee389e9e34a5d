"""`math` refuses the question restated as its answer.

An operation copied out of the prompt ("67 + 12" for "What is 67 + 12?") is equal to the gold, so
math equivalence pays it; a real GRPO run on SmolLM2-135M-Instruct learned within eight steps to
answer every sum with "To calculate 67 + 12, you can" (held-out reward 1.0, no sum computed). By
default such an answer scores 0 with ``reason: restates_prompt``; ``restated: true`` allows it.
"""

from __future__ import annotations

import pytest

from rewardhub.types import ChatMessage, Sample
from rewardhub.verifiers.math import MathVerifier

ASKED = "What is 67 + 12? Reply with only the number."


def score(response: str, reference: str, prompt=ASKED, **config):
    sample = Sample(prompt=prompt, response=response, reference=reference)
    return MathVerifier().score(sample, MathVerifier.Config(**config))


@pytest.mark.parametrize(
    "response",
    [
        "To calculate 67 + 12, you can",  # what the trained policy said, unanchored
        "\\boxed{67+12}",
        "The answer is $67 + 12$.",
        "<answer>67 + 12</answer>",
        "\\boxed{12 + 67}",  # the prompt's numbers, reordered
        "\\boxed{(67+12)}",  # or bracketed
    ],
)
def test_the_question_restated_scores_zero_and_says_why(response: str) -> None:
    result = score(response, "79")
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, "restates_prompt")


def test_the_restated_question_is_read_in_chat_prompts_too() -> None:
    chat = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content=ASKED)]
    assert score("\\boxed{67 + 12}", "79", prompt=chat).details["reason"] == "restates_prompt"


def test_the_config_can_allow_it() -> None:
    assert score("\\boxed{67+12}", "79", restated=True).score == 1.0


@pytest.mark.parametrize(
    ("prompt", "response", "gold"),
    [
        (ASKED, "79", "79"),  # the computed answer
        (ASKED, "\\boxed{79}", "79"),
        ("Which is larger, 1/2 or 1/3?", "\\boxed{1/2}", "1/2"),  # a number taken from the prompt
        ("Which is larger, 1/2 or 1/3?", "\\boxed{\\frac{1}{2}}", "0.5"),
        ("Factor x^2 - 1.", "\\boxed{(x-1)(x+1)}", "(x-1)(x+1)"),  # the gold's own spelling
        ("Compute -3 + 5.", "\\boxed{2}", "2"),
        (None, "\\boxed{67+12}", "79"),  # no prompt sent: nothing to compare with
        ("What is 60 + 19?", "\\boxed{67+12}", "79"),  # an operation, but not the one asked
        ("What is 0.5 as a fraction? Use 1 and 2.", "\\boxed{1/2}", "0.5"),  # a quotient is a fraction
        ("Express 1500 in scientific notation.", "\\boxed{1.5 \\times 10^3}", "1500"),
    ],
)
def test_answers_that_do_not_restate_the_question_are_judged_as_before(prompt, response: str, gold: str) -> None:
    assert score(response, gold, prompt=prompt).score == 1.0
