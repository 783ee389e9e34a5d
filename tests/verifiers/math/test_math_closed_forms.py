"""Closed forms with huge powers are decided, exactly or numerically, never refused or hung; a
near miss (a term dropped, a tiny term added) is never equal."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest
import sympy

from rewardhub.types import Sample
from rewardhub.verifiers.math import MathVerifier
from rewardhub.verifiers.math.closed_form import MAX_DIGITS, numerically_equal, surd, surds_equal

GOLD_2016 = "\\frac{(3-\\sqrt{3})(2-\\sqrt{3})^{2016}+(3+\\sqrt{3})(2+\\sqrt{3})^{2016}}{6}"


def result(gold: str, answer: str):
    return MathVerifier().score(Sample(response=f"\\boxed{{{answer}}}", reference=gold), MathVerifier.Config())


# -- exact algebra on square roots -----------------------------------------------------------------

s3, s2, s6 = sympy.sqrt(3), sympy.sqrt(2), sympy.sqrt(6)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (sympy.Rational(3, 4), {frozenset(): Fraction(3, 4)}),
        (2 + 3 * s6, {frozenset(): Fraction(2), frozenset({2, 3}): Fraction(3)}),
        (s2 * s3, {frozenset({2, 3}): Fraction(1)}),
        (sympy.sqrt(sympy.Rational(3, 4)), {frozenset({3}): Fraction(1, 2)}),
        (sympy.Pow(sympy.Integer(12), sympy.Rational(1, 2), evaluate=False), {frozenset({3}): Fraction(2)}),
        (sympy.I * s2, {frozenset({-1, 2}): Fraction(1)}),
        (sympy.Pow(2 + s3, -1), {frozenset(): Fraction(2), frozenset({3}): Fraction(-1)}),  # 1/(2+√3) = 2-√3
        (sympy.Pow(s2 + s3, 2), {frozenset(): Fraction(5), frozenset({2, 3}): Fraction(2)}),
    ],
)
def test_surds_are_exact_coefficients(expr, expected):
    assert surd(expr) == expected


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (sympy.Pow(2 + s3, 100) + sympy.Pow(2 - s3, 100), sympy.Pow(7 + 4 * s3, 50) + sympy.Pow(7 - 4 * s3, 50), True),
        (sympy.Pow(2 + s3, 100) + sympy.Pow(2 - s3, 100), sympy.Pow(2 + s3, 100), False),  # 10^-114 apart
        (1 / (s2 + s3), s3 - s2, True),
        (sympy.Pow(1 + sympy.I, 10), 32 * sympy.I, True),
        (sympy.pi, sympy.pi, None),  # not a surd: the numeric test decides
    ],
)
def test_surds_decide_exactly_or_not_at_all(a, b, equal):
    assert surds_equal(a, b) is equal


def test_an_exact_value_past_the_bounds_is_left_to_numerics():
    assert surd(sympy.Pow(2 + s3, 10**7, evaluate=False)) is None  # millions of digits
    assert surd(sympy.sqrt(sympy.Integer(10**16 + 1), evaluate=False)) is None  # radicand too large to factor


# -- numerics at a precision that sees every term --------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (sympy.exp(100) + sympy.exp(-100), 2 * sympy.cosh(100), True),
        (sympy.exp(100) + sympy.exp(-100), sympy.exp(100), False),  # 10^-87 apart: 50 digits would not see it
        (sympy.pi**2016 + 1, sympy.pi**2016, False),  # 1 in 10^1002
        (sympy.sqrt(5 + 2 * s6), s2 + s3, True),  # a nested root: not a surd
        (sympy.exp(sympy.I * sympy.pi), sympy.Integer(-1), True),
        (sympy.pi * (10**90 + 1) / 10**90, sympy.pi, False),  # a 91-digit literal sets the precision
    ],
)
def test_numeric_equality_resolves_every_term(a, b, equal):
    assert numerically_equal(a, b) is equal


def test_a_precision_past_the_cap_is_no_verdict():
    tiny = sympy.Pow(10, -(MAX_DIGITS + 100))
    assert numerically_equal(sympy.pi + tiny, sympy.pi) is None


# -- the verifier on closed forms with huge powers -------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "\\frac{(3+\\sqrt{3})(2+\\sqrt{3})^{2016}+(3-\\sqrt{3})(2-\\sqrt{3})^{2016}}{6}",
        "\\frac{(1+\\sqrt{3})(2+\\sqrt{3})^{2016}}{2\\sqrt{3}}+\\frac{(\\sqrt{3}-1)(2-\\sqrt{3})^{2016}}{2\\sqrt{3}}",
        "\\frac{(3+\\sqrt{3})(7+4\\sqrt{3})^{1008}+(3-\\sqrt{3})(7-4\\sqrt{3})^{1008}}{6}",
        # the response of NeMo-Gym 0.7.0's math_with_judge example_rollouts.jsonl (reward 1 there)
        "\\dfrac{(1+\\sqrt{3})^{4033}-(1-\\sqrt{3})^{4033}}{2^{2017}\\sqrt{3}}",
    ],
)
def test_an_equal_closed_form_of_a_huge_power_matches(answer):
    # the gold is an integer of 1,153 digits: both sides are compared as the exact rationals they are
    judged = result(GOLD_2016, answer)
    assert (judged.status, judged.score, judged.details["rule"]) == ("ok", 1.0, "number")


def test_an_irrational_closed_form_is_compared_exactly():
    judged = result("(1+\\sqrt{2})^{2000}", "(3+2\\sqrt{2})^{1000}")
    assert (judged.status, judged.score, judged.details["rule"]) == ("ok", 1.0, "exact")
    assert result("(1+\\sqrt{2})^{2000}", "(3+2\\sqrt{2})^{1000}+(3-2\\sqrt{2})^{1000}").score == 0.0


@pytest.mark.parametrize(
    "answer",
    [
        "\\frac{(3+\\sqrt{3})(2+\\sqrt{3})^{2016}}{6}",  # the 10^-1153 term dropped
        "\\frac{(3+\\sqrt{3})(2+\\sqrt{3})^{2016}+(3-\\sqrt{3})(2-\\sqrt{3})^{2016}}{6}+10^{-3000}",
        "\\frac{(3+\\sqrt{3})(2+\\sqrt{3})^{2017}+(3-\\sqrt{3})(2-\\sqrt{3})^{2017}}{6}",
        "\\frac{(3+\\sqrt{3})(2+\\sqrt{3})^{2016}+(3-\\sqrt{3})(2-\\sqrt{3})^{2016}}{6}+10^{-3000}\\pi",
    ],
)
def test_a_near_miss_of_a_huge_power_is_wrong(answer):
    judged = result(GOLD_2016, answer)
    assert (judged.status, judged.score) == ("ok", 0.0), judged


def test_a_closed_form_that_is_rational_follows_the_decimal_rules():
    # (2+√3)^4 + (2-√3)^4 = 194: an integer in disguise, so a rounding is never its answer
    gold = "(2+\\sqrt{3})^{4}+(2-\\sqrt{3})^{4}"
    assert result(gold, "194").score == 1.0
    assert result(gold, "194.0").score == 1.0
    assert result(gold, "194.001").score == 0.0
    # 12.345 written with square roots: it has an exact decimal, so 12.35 is a rounding, not the answer
    disguised = "\\frac{2469}{2800}((2+\\sqrt{3})^{2}+(2-\\sqrt{3})^{2})"
    assert result(disguised, "12.345").score == 1.0
    assert result(disguised, "12.35").score == 0.0


def test_huge_closed_forms_are_decided_promptly():
    """In a subprocess with a hang guard: gold and answer both huge closed forms, decided."""
    program = textwrap.dedent(
        """
        import json, sys
        from rewardhub.types import Sample
        from rewardhub.verifiers.math.verifier import MathVerifier
        out = []
        for gold, answer in json.loads(sys.stdin.read()):
            r = MathVerifier().score(Sample(response=answer, reference=gold), MathVerifier.Config())
            out.append([r.status, r.score])
        print(json.dumps(out))
        """
    )
    pairs = [
        ("(2+\\sqrt{3})^{20000}+(2-\\sqrt{3})^{20000}", "(7+4\\sqrt{3})^{10000}+(7-4\\sqrt{3})^{10000}"),
        ("(1+\\sqrt{2}+\\sqrt{3}+\\sqrt{5})^{3000}", "(1+\\sqrt{5}+\\sqrt{3}+\\sqrt{2})^{3000}"),
        ("\\pi^{2016}+e^{-2016}", "\\pi^{2016}"),
    ]
    done = subprocess.run(
        [sys.executable, "-c", program], input=json.dumps(pairs), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [["ok", 1.0], ["ok", 1.0], ["ok", 0.0]]
