"""``choice``'s modes: NeMo-Gym's grading modes, each with its own idea of what an answer is.

rewardhub's own reading stays the default. A NeMo-Gym mode reads the whole text (a think block
included) and only its own anchor; ``details.mode`` names the reading. The cases below are the
modes' rules, one behaviour each; tests/api/compat/test_nemo_gym_agreement.py checks them against
the released servers on a generated corpus.
"""

from __future__ import annotations

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.choice import ChoiceVerifier
from rewardhub.verifiers.choice_modes import read_letter

OPTIONS = [{"A": "red"}, {"B": "blue"}, {"C": "green"}, {"D": None}]
ABC = set("ABC")


def score(response: str, gold: str = "B", **config):
    config.setdefault("letters", "ABC")
    sample = Sample(response=response, reference=gold)
    return ChoiceVerifier().score(sample, ChoiceVerifier.Config(**config))


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("\\boxed{B}", "B"),
        ("\\boxed{[B]}", "B"),
        ("\\boxed{(B)}", "B"),
        ("\\boxed{\\text{B}}", "B"),
        ("\\boxed{B: blue}", "B"),
        ("\\boxed{B}, no, \\boxed{C}", "C"),  # the last box
        ("\\boxed{blue}", None),  # option text: not this mode's answer
        ("Answer: B", None),  # no box, no answer
        ("\\boxed{b}", None),  # a box holds a capital
        ("\\boxed{D}", None),  # D has no text: not an option
        ("\\boxed{B", None),  # unclosed
    ],
)
def test_strict_single_letter_boxed_reads_only_the_last_box(text: str, letter: str | None) -> None:
    assert read_letter(text, "strict_single_letter_boxed", ABC, OPTIONS) == letter


def test_lenient_boxed_also_takes_the_one_option_whose_text_the_box_holds() -> None:
    assert read_letter("\\boxed{Blue}", "lenient_boxed", ABC, OPTIONS) == "B"
    assert read_letter("\\boxed{\\text{the blue one}}", "lenient_boxed", ABC, OPTIONS) == "B"
    assert read_letter("\\boxed{blue or green}", "lenient_boxed", ABC, OPTIONS) is None  # two options
    assert read_letter("blue", "lenient_boxed", ABC, OPTIONS) is None  # outside a box


def test_lenient_answer_colon_reads_the_first_answer_line_as_a_letter_or_an_options_whole_text() -> None:
    assert read_letter("Answer: B", "lenient_answer_colon", ABC, OPTIONS) == "B"
    assert read_letter("answer: Blue", "lenient_answer_colon", ABC, OPTIONS) == "B"
    assert read_letter("Answer: (B)", "lenient_answer_colon", ABC, OPTIONS) is None  # not a lone letter
    assert read_letter("Answer: B\nAnswer: C", "lenient_answer_colon", ABC, OPTIONS) == "B"  # the first
    assert read_letter("\\boxed{B}", "lenient_answer_colon", ABC, OPTIONS) is None


def test_lenient_answer_colon_md_reads_the_last_payload_that_names_one_letter() -> None:
    mode = "lenient_answer_colon_md"
    assert read_letter("**Answer:** B", mode, ABC) == "B"
    assert read_letter("Answer: A\nlater... Answer: (C) green", mode, ABC) == "C"
    assert read_letter("Answer: A or C", mode, ABC) is None  # a list of letters is no answer
    assert read_letter("Final choice: C", mode, ABC, answer_prefix="Final choice:") == "C"
    assert read_letter("\\boxed{C}", mode, ABC) is None
    assert read_letter("\\boxed{C}", mode, ABC, answer_prefix="Final choice:") == "C"  # the box as a fallback


def test_gpqa_reads_the_last_box_then_answer_colon_and_any_capital_without_options() -> None:
    assert read_letter("\\boxed{The answer is C}", "gpqa", ABC) == "C"
    assert read_letter("**Answer**: b", "gpqa", ABC) == "B"
    assert read_letter("\\boxed{Z}", "gpqa", ABC) is None
    assert read_letter("\\boxed{Z}", "gpqa", set()) == "Z"


def test_a_nemo_gym_mode_reads_the_think_block_rewardhubs_own_reading_skips_it() -> None:
    text = "<think>\\boxed{B}</think> I am not sure."
    assert score(text, mode="strict_single_letter_boxed").score == 1.0
    assert score(text).score == 0.0
    assert score(text, mode="strict_single_letter_boxed", strip_think=True).score == 0.0


def test_details_name_the_mode_and_the_default_is_rewardhubs_reading() -> None:
    assert score("The answer is (B).").details["mode"] == "rewardhub"
    assert score("The answer is (B).").score == 1.0
    result = score("The answer is (B).", mode="strict_single_letter_boxed")
    assert (result.score, result.details["mode"], result.details["reason"]) == (
        0.0,
        "strict_single_letter_boxed",
        "no_answer",
    )


def test_a_gold_that_is_no_option_scores_0_in_a_nemo_gym_mode_and_is_an_error_in_rewardhubs() -> None:
    assert score("\\boxed{B}", gold="", mode="strict_single_letter_boxed").score == 0.0
    with pytest.raises(VerifierError):
        score("\\boxed{B}", gold="")
