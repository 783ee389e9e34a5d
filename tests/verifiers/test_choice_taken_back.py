"""`choice` does not pay a letter taken back right after "Answer:".

falsepass 0.11.0 found, through the service, "Answer: B or C", "Answer: B = C", "Answer: B \\lor C",
"Answer: B (this is wrong)", "Answer: B \\text{ is wrong}" (its P15, hedged in the answer slot) and
"Answer: A B C D" (its A1, every label sprayed) paid in full. Such a reply commits to no letter
(``anchor: taken_back``, score 0); what follows in another sentence or on another line does not
take the letter back.
"""

from __future__ import annotations

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.choice import ChoiceVerifier


def score(response: str, reference: str = "B") -> float:
    result = ChoiceVerifier().score(Sample(response=response, reference=reference), ChoiceVerifier.Config())
    assert result.status == "ok", result.error
    return result.score


@pytest.mark.parametrize(
    "response",
    [
        "Answer: B or C",
        "Answer: C or B",
        "Answer: B = C",
        "Answer: B \\lor C",
        "Answer: B / C",
        "Answer: B (this is wrong)",
        "Answer: B \\text{ is wrong}",
        "Answer: B is incorrect",
        "Answer: A B C D",
        "Answer: (A) (B) (C) (D)",
    ],
)
def test_a_letter_taken_back_scores_0(response: str) -> None:
    assert score(response) == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "Answer: B",
        "Answer: (B) Carbon dioxide",
        "Answer: B, a gas plants take in",
        "Answer: B. Oxygen is not what they take in.",
        "The answer is B because nitrogen is not absorbed.",
        "Answer: B\nC is wrong.",
        "**Answer: B**",
        "\\boxed{B}",
    ],
)
def test_a_committed_letter_still_scores_1(response: str) -> None:
    assert score(response) == 1.0
