"""Recall classes a rule can decide safely: each right spelling scores 1, and its wrong neighbours 0.

Decimal approximations of exact golds (also entry by entry in matrices and tuples), ordinal suffixes, TeX's unbraced arguments, golds damaged by
JSON escapes, labelled extremes against a bare pair, and inequalities against intervals and unions.
"""

from __future__ import annotations

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.math import MathVerifier
from rewardhub.verifiers.math.normalize import normalize, repair_escapes

VERIFIER = MathVerifier()


def verdict(gold: str, response: str, **config: object) -> float:
    result = VERIFIER.score(Sample(response=response, reference=gold), MathVerifier.Config(**config))
    assert result.status == "ok", result
    return result.score


def boxed(answer: str) -> str:
    return f"So the final answer is $\\boxed{{{answer}}}$."


# -- decimal approximations of golds with no exact decimal -----------------------------------------


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("600/7", "85.71", 1.0),  # 85.714285...: correctly rounded, 4 significant digits
        ("\\frac{600}{7}", "85.714", 1.0),
        ("\\frac{1}{3}", "0.3333", 1.0),
        ("\\frac{2}{3}", "0.6667", 1.0),
        ("\\sqrt{2}", "1.414", 1.0),
        ("\\pi", "3.142", 1.0),
        ("600/7", "85.7", 0.0),  # 3 significant digits do not pin the value
        ("\\frac{1}{3}", "0.33", 0.0),
        ("600/7", "85.72", 0.0),  # not the gold rounded
        ("\\frac{2}{3}", "0.6666", 0.0),  # truncated, not rounded
        ("\\sqrt{2}", "1.415", 0.0),
        ("\\frac{1}{8}", "0.13", 0.0),  # 1/8 is exactly 0.125: a rounding is never its answer
        ("\\frac{1}{8}", "0.1250", 1.0),
    ],
)
def test_a_rounded_decimal_meets_a_gold_that_has_no_exact_decimal(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


ROTATION = "\\begin{pmatrix}\\frac{\\sqrt{3}}{2} & -\\frac{1}{2}\\\\ \\frac{1}{2} & \\frac{\\sqrt{3}}{2}\\end{pmatrix}"


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        # entries of a matrix or a tuple follow the scalar rule, entry by entry
        (ROTATION, "\\begin{pmatrix}0.8660 & -0.5\\\\ 0.5 & 0.8660\\end{pmatrix}", 1.0),
        (ROTATION, "\\left(\\begin{array}{cc}0.8660 & -0.5\\\\ 0.5 & 0.8660\\end{array}\\right)", 1.0),
        (ROTATION, "\\begin{pmatrix}0.866 & -0.5\\\\ 0.5 & 0.866\\end{pmatrix}", 0.0),  # 3 significant digits
        (ROTATION, "\\begin{pmatrix}0.8661 & -0.5\\\\ 0.5 & 0.8660\\end{pmatrix}", 0.0),  # one entry off
        ("\\begin{pmatrix}1/8\\\\ 2/3\\end{pmatrix}", "\\begin{pmatrix}0.125\\\\ 0.6667\\end{pmatrix}", 1.0),
        ("\\begin{pmatrix}1/8\\\\ 2/3\\end{pmatrix}", "\\begin{pmatrix}0.13\\\\ 0.6667\\end{pmatrix}", 0.0),
        ("\\begin{pmatrix}1/3 & 2/3\\end{pmatrix}", "\\begin{pmatrix}0.3333 & 0.6666\\end{pmatrix}", 0.0),  # truncated
        ("\\begin{pmatrix}0.87 & 1\\end{pmatrix}", "\\begin{pmatrix}\\frac{\\sqrt{3}}{2} & 1\\end{pmatrix}", 1.0),
        ("(\\frac{\\sqrt{3}}{2}, -\\frac{1}{7})", "(0.8660, -0.1429)", 1.0),
        ("(\\frac{\\sqrt{3}}{2}, -\\frac{1}{7})", "(0.8660, -0.143)", 0.0),
        ("(\\frac{1}{3}, \\frac{600}{7})", "(0.3333, 85.71)", 1.0),
        ("(\\frac{1}{3}, \\frac{600}{7})", "(85.71, 0.3333)", 0.0),  # a tuple keeps its order
    ],
)
def test_rounded_entries_of_matrices_and_tuples(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


def test_rounded_entries_follow_the_settings_of_scalars():
    gold, response = ROTATION, boxed("\\begin{pmatrix}0.8660 & -0.5\\\\ 0.5 & 0.8660\\end{pmatrix}")
    assert verdict(gold, response, rounded_digits=5) == 0.0
    assert verdict(gold, response, strict=True) == 0.0


def test_rounded_digits_is_a_setting_and_strict_turns_it_off():
    assert verdict("600/7", boxed("85.71"), rounded_digits=5) == 0.0
    assert verdict("600/7", boxed("85.714"), rounded_digits=5) == 1.0
    assert verdict("600/7", boxed("85.71"), rounded_digits=0) == 0.0
    assert verdict("600/7", boxed("85.71"), strict=True) == 0.0
    assert verdict("600/7", boxed("85.7"), rounded_digits=3) == 1.0


# -- ordinal suffixes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("12^{th}", 1.0),
        ("12^{\\text{th}}", 1.0),
        ("12^\\text{th}", 1.0),
        ("12\\text{th}", 1.0),
        ("12th", 1.0),
        ("13^{th}", 0.0),
        ("1.2^{th}", 0.0),  # not an integer: no ordinal to strip
    ],
)
def test_an_ordinal_suffix_is_the_number(response, expected):
    assert verdict("12", boxed(response)) == expected


def test_ordinals_only_follow_integers():
    assert normalize("x^{th}") == "x^{th}"
    assert normalize("\\{1st, 2nd, 3rd\\}") == "\\{1, 2, 3\\}"
    assert normalize("\\text{12th}") == "\\text{12}"  # braces stay balanced


# -- TeX's unbraced arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\\frac{1+a}{c}", "\\frac{1+a}c", 1.0),
        ("\\frac{1+a}{c}", "\\frac{1+a}d", 0.0),
        ("\\frac{1}{2}", "\\frac12", 1.0),
        ("\\frac{1}{2}", "\\frac 1 2", 1.0),
        ("\\frac{a}{b}", "\\frac ab", 1.0),
        ("\\frac{a}{b+1}", "\\frac a{b+1}", 1.0),
        ("\\frac{1}{\\pi}", "\\frac1\\pi", 1.0),
        ("\\frac{d}{c}", "\\frac{1+a}cd", 0.0),  # TeX reads (1+a)/c times d
    ],
)
def test_unbraced_arguments_read_as_tex_reads_them(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


# -- golds damaged by JSON escapes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("damaged", "expected"),
    [
        ("\frac{1}{2}", "\\frac{1}{2}"),  # form feed + "rac"
        ("5\text{ cm}", "5\\text{ cm}"),  # tab + "ext"
        ("3\times 4", "3\\times 4"),
        ("x \neq 2", "x \\neq 2"),  # line feed + "eq"
        ("\boxed{3}", "\\boxed{3}"),  # backspace + "oxed"
        ("\rightarrow", "\\rightarrow"),
        ("\\\frac{7}{4}", "\\frac{7}{4}"),  # the backslash before the form feed was the command's own
        ("a\tb", "a\tb"),  # a real tab: "tb" is no command
        ("first\nsecond", "first\nsecond"),
    ],
)
def test_escapes_that_ate_a_command_are_repaired(damaged, expected):
    assert repair_escapes(damaged) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\frac{1}{2}", "0.5", 1.0),
        ("\frac{1}{2}", "\\frac{1}{3}", 0.0),
        ("5\text{ cm}", "5", 1.0),
        ("5\text{ cm}", "6", 0.0),
        ("\boxed{7}", "7", 1.0),
        ("\\sqrt{3}\times 2", "2\\sqrt{3}", 1.0),
        ("x \neq 2", "x \\ne 2", 1.0),
    ],
)
def test_a_damaged_gold_is_judged_as_it_was_written(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


# -- labelled extremes against a bare pair ---------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("1, 2", "Maximum = 2, Minimum = 1", 1.0),
        ("1, 2", "\\text{Maximum} = 2, \\text{Minimum} = 1", 1.0),
        ("1, 2", "\\text{min} = 1, \\text{max} = 2", 1.0),
        ("2, 1", "Maximum = 2, Minimum = 1", 1.0),
        ("(1, 2)", "\\text{maximum value} = 2, \\text{minimum value} = 1", 1.0),
        ("1, 2", "Maximum = 1, Minimum = 2", 0.0),  # a maximum below its minimum is no answer
        ("1, 3", "Maximum = 2, Minimum = 1", 0.0),
        ("1, 2", "a = 2, b = 1", 0.0),  # labels that are not extremes keep their order
        ("(1, 2)", "Maximum = 3, Minimum = 1", 0.0),
    ],
)
def test_labelled_extremes_match_the_pair_they_name(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


# -- inequalities against intervals ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("(3,4]", "3 < \\lambda \\leq 4", 1.0),
        ("(3,4]", "3 \\le \\lambda \\le 4", 0.0),
        ("(-\\infty,-2] \\cup \\{1\\}", "a \\le -2 \\text{ or } a = 1", 1.0),
        ("(-\\infty,-2] \\cup \\{1\\}", "a \\le -2 or a = 1", 1.0),
        ("(-\\infty,-2] \\cup \\{1\\}", "a < -2 \\text{ or } a = 1", 0.0),
        ("(-\\infty,-2] \\cup \\{1\\}", "a \\le -2 \\text{ or } a = 2", 0.0),
        ("(-\\infty,-2] \\cup \\{1\\}", "a \\le -2 \\text{ or } b = 1", 0.0),  # two variables: no set
        ("a \\le -2 \\text{ or } a = 1", "(-\\infty,-2] \\cup \\{1\\}", 1.0),
    ],
)
def test_inequalities_and_values_of_one_variable_describe_a_set(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected
