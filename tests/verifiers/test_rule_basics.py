"""Regression tables for the small rule verifiers: exact, choice, format, length."""

from __future__ import annotations

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.choice import ChoiceVerifier
from rewardhub.verifiers.exact import ExactVerifier
from rewardhub.verifiers.format import FormatVerifier
from rewardhub.verifiers.length import LengthVerifier, soft_overlong_penalty


def score(verifier, response: str, reference=None, **config):
    return verifier.score(Sample(response=response, reference=reference), verifier.Config(**config))


@pytest.mark.parametrize(
    ("response", "reference", "config", "expected"),
    [
        ("Paris", "paris", {}, 1.0),
        ("Paris", "paris", {"case_sensitive": True}, 0.0),
        ("  New   York ", "new york", {}, 1.0),
        ("New  York", "New York", {"whitespace_sensitive": True}, 0.0),
        ("Paris.", "Paris", {}, 0.0),
        ("Paris.", "Paris", {"punctuation_sensitive": False}, 1.0),
        ("<think>hmm</think>Paris", "Paris", {}, 1.0),
        ("<think>hmm</think>Paris", "Paris", {"strip_think": False}, 0.0),
        ("NYC", ["New York", "NYC"], {}, 1.0),
        ("42", 42, {}, 1.0),
        ("ﬁne", "fine", {}, 1.0),  # NFKC folds the ligature
    ],
)
def test_exact(response, reference, config, expected):
    assert score(ExactVerifier(), response, reference, **config).score == expected


LAST_NUMBER = {"extract": "last_number"}


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("79", "79", 1.0),
        ("79.", "79", 1.0),
        ("The answer is 79", "79", 1.0),
        ("67 + 12 = 79", "79", 1.0),
        ("79 is the sum of 67 and 12", "79", 0.0),  # the final number is 12
        ("To calculate 67 + 12, you can", "79", 0.0),  # the question restated, cut off
        ("67 + 12", "79", 0.0),  # nothing is evaluated
        ("80 - 1", "79", 0.0),
        ("seventy-nine", "79", 0.0),  # no number at all
        ("", "79", 0.0),
        ("179", "79", 0.0),  # a number is read whole, never a suffix of one
        ("790", "79", 0.0),
        ("79.5", "79", 0.0),
        ("x = -5", "-5", 1.0),
        ("67-12", "12", 1.0),  # a minus glued to a digit is an operator, not a sign
        ("It costs 1,250 dollars", "1250", 1.0),
        ("h264", "264", 0.0),  # glued to a letter: a name, not a number
        ("<think>it is 80</think>79", "79", 1.0),
        ("79 or 80", ["80", "eighty"], 1.0),
    ],
)
def test_exact_on_the_last_number(response, reference, expected):
    result = score(ExactVerifier(), response, reference, **LAST_NUMBER)
    assert result.status == "ok"
    assert result.score == expected


def test_exact_on_the_last_number_says_when_there_is_none():
    assert score(ExactVerifier(), "no digits here", "79", **LAST_NUMBER).details["reason"] == "no_number"


def test_exact_without_a_reference_is_an_error():
    with pytest.raises(VerifierError):
        score(ExactVerifier(), "x", None)


@pytest.mark.parametrize(
    ("response", "expected_letter"),
    [
        ("The answer is (B).", "B"),
        ("Answer: C", "C"),
        ("After checking, \\boxed{D}", "D"),
        ("\\boxed{\\text{A}}", "A"),
        ("Let me think.\n(B)", "B"),
        ("Considering all options...\nC. 42", "C"),
        ("I first thought A, but the answer is B", "B"),
        ("It could be A or C", None),
        ("No idea.", None),
        ("**Answer: D**", "D"),
    ],
)
def test_choice_extraction(response, expected_letter):
    result = score(ChoiceVerifier(), response, "B")
    assert result.details["extracted"] == expected_letter
    assert result.score == (1.0 if expected_letter == "B" else 0.0)


def test_choice_ignores_letters_outside_the_options():
    result = score(ChoiceVerifier(), "The answer is E", "B", letters="ABCD")
    assert result.details["extracted"] is None


def test_choice_with_a_non_letter_reference_is_an_error():
    with pytest.raises(VerifierError):
        score(ChoiceVerifier(), "A", "42")


@pytest.mark.parametrize(
    ("response", "config", "reason"),
    [
        ("<think>work</think> 42", {}, "ok"),
        ("  <think>work</think>\n42", {}, "ok"),
        ("42", {}, "missing_think_open"),
        ("<think>work 42", {}, "think_tags_unbalanced"),
        ("<think>a</think><think>b</think>42", {}, "think_tags_unbalanced"),
        ("<think> </think>42", {}, "empty_reasoning"),
        ("<think>work</think>   ", {}, "empty_answer"),
        ("<think>work</think><answer>42</answer>", {"answer_open": "<answer>", "answer_close": "</answer>"}, "ok"),
        ("<think>work</think>42", {"answer_open": "<answer>", "answer_close": "</answer>"}, "answer_tags_missing"),
        ("work</think>42", {"think_prefilled": True}, "ok"),
        # markup alone is not content
        ("<think><step></step> <step/></think>42", {}, "empty_reasoning"),
        ("<think>work</think><answer></answer>", {}, "empty_answer"),
        (
            "<think>work</think><answer> </answer>",
            {"answer_open": "<answer>", "answer_close": "</answer>"},
            "empty_answer",
        ),
        ("<think>a < b and c > d</think>42", {}, "ok"),  # comparisons are not tags
        ("<think><step>3 + 4 = 7</step></think>7", {}, "ok"),
    ],
)
def test_format(response, config, reason):
    result = score(FormatVerifier(), response, **config)
    assert result.details["reason"] == reason
    assert result.score == (1.0 if reason == "ok" else 0.0)


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0.0), (80, 0.0), (90, -0.5), (100, -1.0), (101, -1.0)],  # L_max 100, L_cache 20
)
def test_soft_overlong_penalty_by_hand(length, expected):
    assert soft_overlong_penalty(length, max_length=100, cache=20) == pytest.approx(expected)


def test_length_prefers_the_trainers_token_count():
    verifier = LengthVerifier()
    config = verifier.Config(max_length=100, cache_length=20)
    by_words = verifier.score(Sample(response="a " * 90), config)
    by_tokens = verifier.score(Sample(response="a " * 90, metadata={"response_tokens": 10}), config)
    assert (by_words.score, by_words.details["unit"]) == (pytest.approx(-0.5), "words")
    assert (by_tokens.score, by_tokens.details["unit"]) == (0.0, "tokens")


def test_length_config_rejects_a_buffer_longer_than_the_limit():
    with pytest.raises(ValueError):
        LengthVerifier.Config(max_length=10, cache_length=20)
