"""``reading``: a request may ask for Math-Verify's reading where rewardhub deliberately differs.

The default stays rewardhub's (the safest for RL rewards); ``reading: "math_verify"`` is
Math-Verify's own verdict on the gold and the response as written, behind our pre-screen. Each
result names its reading in ``details``, and the two readings never share a verdict key.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rewardhub.types import Sample
from rewardhub.verifiers.math import MathVerifier

VERIFIER = MathVerifier()


def judge(gold: object, response: str, **config: object):
    return VERIFIER.score(Sample(response=response, reference=gold), MathVerifier.Config(**config))


@pytest.mark.parametrize(
    ("gold", "response", "rewardhub", "math_verify"),
    [
        # a false chain of constants: nothing to us (falsepass's P15), its right side to Math-Verify
        ("42", "\\boxed{49 = 42}", 0.0, 1.0),
        # a gold whose \t ate the backslash of \text: repaired by us, read as written by Math-Verify
        ("$\text{13}$", "$13$", 1.0, 0.0),
        # a relation against an interval: our relations_as_sets, off by default in Math-Verify
        ("(2,\\infty)", "\\boxed{x > 2}", 1.0, 0.0),
        # where the two agree, they agree
        ("\\frac{1}{2}", "so \\boxed{0.5}", 1.0, 1.0),
        ("x^2+1", "\\boxed{x^2+1}", 1.0, 1.0),  # a bare gold Math-Verify finds nothing in is read boxed
        ("3", "<think>\\boxed{5}</think> so \\boxed{3}", 1.0, 1.0),  # the think block dropped (strip_think)
        ("3", "\\boxed{4}", 0.0, 0.0),
    ],
)
def test_each_reading_gives_its_own_verdict(gold, response, rewardhub, math_verify):
    ours, theirs = judge(gold, response), judge(gold, response, reading="math_verify")
    assert (ours.status, ours.score, ours.details["reading"]) == ("ok", rewardhub, "rewardhub")
    assert (theirs.status, theirs.score, theirs.details["reading"]) == ("ok", math_verify, "math_verify")
    assert theirs.details["reference"].startswith("math-verify ")


def test_the_default_is_rewardhubs_reading():
    assert MathVerifier.Config().reading == "rewardhub"
    assert judge("42", "\\boxed{49 = 42}").details["reason"] == "not_equivalent"


def test_the_readings_have_different_verdict_keys():
    default = MathVerifier.verdict_key(MathVerifier.Config())
    asked = MathVerifier.verdict_key(MathVerifier.Config(reading="math_verify"))
    assert default["config_hash"] != asked["config_hash"]


def test_math_verify_compares_no_relation_with_a_set_unless_asked():
    config = MathVerifier.Config(reading="math_verify")
    assert config.relations_as_sets is False  # written into the config, so its hash says so
    asked = MathVerifier.Config(reading="math_verify", relations_as_sets=True)
    assert MathVerifier.verdict_key(config) != MathVerifier.verdict_key(asked)
    assert judge("(2,\\infty)", "\\boxed{x > 2}", reading="math_verify", relations_as_sets=True).score == 1.0


@pytest.mark.parametrize(
    "field", [{"strict": True}, {"percent": "fraction"}, {"restated": True}, {"anchors": ["boxed"]}]
)
def test_a_policy_field_math_verify_has_no_setting_for_is_refused(field):
    with pytest.raises(ValidationError, match="apply to reading rewardhub"):
        MathVerifier.Config(reading="math_verify", **field)
    MathVerifier.Config(**field)  # the default reading takes it


def test_the_pre_screen_still_refuses_what_would_hang_sympy():
    result = judge("x^{10000000}", "\\boxed{x^{10000000}}", reading="math_verify")
    assert (result.status, result.details["reason"]) == ("error", "too_complex")


def test_a_gold_math_verify_cannot_read_is_an_error_not_a_zero():
    result = judge("\\boxed{}", "\\boxed{3}", reading="math_verify")  # an empty box: nothing to read
    assert (result.status, result.details["reason"]) == ("error", "gold_unparseable")
