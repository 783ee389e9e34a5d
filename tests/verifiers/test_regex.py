"""The `regex` verifier: modes, where the pattern comes from, and refusing to judge unsafely."""

from importlib.metadata import entry_points

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.regex import RegexVerifier

VERIFIER = RegexVerifier()


def score(response: str, reference=None, **config):
    return VERIFIER.score(Sample(response=response, reference=reference), RegexVerifier.Config(**config))


@pytest.mark.parametrize(
    ("response", "config", "expected"),
    [
        ("The answer is 42.", {"pattern": r"\d+"}, 1.0),
        ("The answer is forty-two.", {"pattern": r"\d+"}, 0.0),
        ("42 is the answer", {"pattern": r"\d+", "mode": "match"}, 1.0),
        ("The answer is 42", {"pattern": r"\d+", "mode": "match"}, 0.0),
        ("  42  ", {"pattern": r"\d+", "mode": "fullmatch"}, 1.0),
        ("  42  ", {"pattern": r"\d+", "mode": "fullmatch", "strip": False}, 0.0),
        ("42 and 43", {"pattern": r"\d+", "mode": "fullmatch"}, 0.0),
        ("ANSWER: yes", {"pattern": r"answer: (yes|no)", "flags": ["IGNORECASE"]}, 1.0),
        ("ANSWER: yes", {"pattern": r"answer: (yes|no)"}, 0.0),
        ("a\nb", {"pattern": r"^b$", "flags": ["MULTILINE"]}, 1.0),
        ("a\nb", {"pattern": r"^b$"}, 0.0),
        ("1, 2, 3", {"pattern": r"\d", "mode": "count", "min_count": 3}, 1.0),
        ("1, 2", {"pattern": r"\d", "mode": "count", "min_count": 3}, 0.0),
        ("1, 2, 3, 4", {"pattern": r"\d", "mode": "count", "min_count": 1, "max_count": 3}, 0.0),
        ("none here", {"pattern": r"\d", "mode": "count", "min_count": 0, "max_count": 0}, 1.0),
    ],
)
def test_modes(response, config, expected):
    result = score(response, **config)
    assert result.status == "ok"
    assert result.score == expected


def test_details_say_what_matched_and_where():
    result = score("The answer is 42.", pattern=r"\d+")
    assert result.details == {"mode": "search", "pattern": r"\d+", "matched": True, "span": [14, 16], "match": "42"}
    assert score("1 2 3", pattern=r"\d", mode="count").details["count"] == 3


@pytest.mark.parametrize(
    ("reference", "response", "expected"),
    [
        (r"^\d+$", "123", 1.0),
        (r"^\d+$", "12a", 0.0),
        ({"pattern": r"\d+", "mode": "fullmatch"}, "123", 1.0),
        ({"pattern": r"x", "mode": "count", "min_count": 2}, "x x", 1.0),
        ({"pattern": r"x", "mode": "count", "min_count": 3}, "x x", 0.0),
    ],
)
def test_pattern_from_reference(reference, response, expected):
    assert score(response, reference).score == expected


def test_config_pattern_wins_over_reference_so_it_composes_with_answer_verifiers():
    # In a weighted sum the reference is the gold answer ("7"), not a pattern.
    assert score("<answer>7</answer>", reference="8", pattern=r"<answer>.*</answer>").score == 1.0


@pytest.mark.parametrize(
    ("response", "reference", "config", "message"),
    [
        ("x", None, {}, "no pattern"),
        ("x", 42, {}, "no pattern"),
        ("x", {"mode": "search"}, {}, "malformed regex reference"),
        ("x", {"pattern": "x", "colour": "red"}, {}, "malformed regex reference"),
        ("x", None, {"pattern": "(unclosed"}, "does not compile"),
        ("x", None, {"pattern": "a" * 101, "max_pattern_chars": 100}, "over the limit"),
        ("x" * 101, None, {"pattern": "x", "max_input_chars": 100}, "over the limit"),
    ],
)
def test_what_cannot_be_judged_is_an_error_not_a_zero(response, reference, config, message):
    with pytest.raises(VerifierError, match=message):
        score(response, reference, **config)


@pytest.mark.parametrize("mode", ["search", "count"])
def test_catastrophic_backtracking_is_stopped_by_the_engine_and_reported(mode):
    with pytest.raises(VerifierError, match="timed out"):
        score("a" * 40 + "!", pattern=r"(a|aa)+$", mode=mode, match_timeout_s=0.1)


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in RegexVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="regex")
    assert ep.load() is RegexVerifier
