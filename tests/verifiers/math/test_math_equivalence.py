"""The ``math`` verifier's verdicts, class by class: every known false-positive class scores 0,
every hard-tail spelling of a right answer scores 1 (issue 3, points 1 and 2)."""

from __future__ import annotations

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.math.verifier import MathVerifier

VERIFIER = MathVerifier()


def verdict(gold: str, response: str, **config: object) -> float:
    result = VERIFIER.score(Sample(response=response, reference=gold), MathVerifier.Config(**config))
    assert result.status == "ok", result
    return result.score


def boxed(answer: str) -> str:
    return f"So the final answer is $\\boxed{{{answer}}}$."


# -- precision: known false-positive classes must score 0 -------------------------------------------


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("42", "The answer is not 42, it is 41."),
        ("7", "The answer isn't 7; it's 8."),
        ("41", "The answer is 42, not 41."),
    ],
)
def test_the_number_after_answer_is_not_the_answer_when_negated(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("0", "__import__('os').system('touch marker') or 0"),
        ("0", "(lambda: open('marker', 'w'))() or 0"),
        ("2", "eval('1+1') or 2"),
        ("0", "getattr(__import__('pathlib').Path('m'), 'touch')() or 0"),
        ("0", "whatever you like, or 0"),
    ],
)
def test_garbage_ending_in_the_gold_scores_nothing(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("3x+4y+14=0", boxed("3x-y+13=0")),
        ("y = 2x + 1", boxed("y = 2x + 3")),
        ("7 = 11a+c", boxed("11a+c")),
        ("x^2+y^2=1", boxed("1")),
        ("2x + 3y = 6", boxed("6")),
    ],
)
def test_equations_are_not_collapsed_to_their_right_hand_sides(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("1/2^{98}", boxed("1/2^{99}")),
        ("\\frac{1}{2^{100}}", boxed("0")),
        ("10^{-20}", boxed("10^{-21}")),
        ("e^{-100}", boxed("e^{-99}")),
        ("(1, 2^{-99})", boxed("(1, 2^{-98})")),
        ("x = 2^{-99}", boxed("x = 2^{-98}")),
        ("x", boxed("x + 10^{-30}")),
    ],
)
def test_tiny_magnitudes_are_not_chopped_to_zero(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("4", boxed("4\\sqrt(2)")),
        ("4", boxed("4\\sqrt{2")),
        ("12", boxed("12\\\\3")),
        ("2", boxed("(2")),
        ("5", boxed("5 +")),
    ],
)
def test_malformed_latex_is_not_reduced_to_a_prefix(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("\\{10, 42\\}", "\\boxed{10} and then \\boxed{42}"),
        ("10, 42", "\\boxed{10}. Wait, no: \\boxed{42}"),
        ("5", "\\boxed{5} or \\boxed{6}"),
    ],
)
def test_separately_boxed_candidates_do_not_make_a_set(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("(3, 3), (1, 1)", "$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$", 1.0),
        ("(3, 3), (1, 1)", "$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 2)}$$", 0.0),
        ("\\{35, 4\\}", "$\\boxed{35 cm} ++++++ \\boxed{4}$", 1.0),
        ("(2, 3)", "\\[ x = \\boxed{2} \\text{ and then } y = \\boxed{3} \\]", 1.0),
        ("(2, 3)", "\\[ x = \\boxed{3} \\text{ and then } y = \\boxed{2} \\]", 0.0),  # a tuple keeps its order
        ("3", "$$\\boxed{2} \\text{ or } \\boxed{3}$$", 0.0),  # a formula with two boxes answers both
    ],
)
def test_boxes_in_one_formula_are_one_answer(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("(1, 2)", boxed("\\{2, 1\\}")),
        ("(1,2)", boxed("(2,1)")),
        ("(3, 1)", boxed("1, 3")),
        ("(1,2,3)", boxed("\\{1,2,3\\}")),
    ],
)
def test_ordered_answers_are_not_compared_as_sets(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "percent", "expected"),
    [
        ("0.28", "28", "either", 0.0),  # no percent sign anywhere: 28 is not 0.28
        ("28", "0.28", "either", 0.0),
        ("28\\%", "0.28", "either", 1.0),
        ("28\\%", "28", "either", 1.0),
        ("0.335", "33.5\\%", "either", 1.0),
        ("28\\%", "28", "fraction", 0.0),
        ("28\\%", "0.28", "number", 0.0),
        ("28\\%", "0.28", "fraction", 1.0),
    ],
)
def test_percent_is_decided_by_policy(gold, response, percent, expected):
    assert verdict(gold, boxed(response), percent=percent) == expected


# -- recall: the hard tail of right answers must score 1 --------------------------------------------


def test_the_last_box_is_the_answer():
    assert verdict("5", "First \\boxed{3}. Checking again, so actually \\boxed{5}.") == 1.0
    assert verdict("3", "First \\boxed{3}. Checking again, so actually \\boxed{5}.") == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("16, 3", boxed("w=16, d=3")),
        ("1, 3", "Minimum: 1, Maximum: 3"),
        ("1, 3", boxed("\\text{Minimum: } 1, \\text{Maximum: } 3")),
        ("(2, 3)", boxed("a = 2, b = 3")),
        ("x = -5,\\ p = \\frac{14}{3}", boxed("-5, \\frac{14}{3}")),
        ("a_3 = 2, a_{37} = 19", boxed("a_{37} = 19, \\quad a_3 = 2")),
    ],
)
def test_labelled_components(gold, response):
    assert verdict(gold, response) == 1.0


def test_labelled_components_keep_their_order_against_an_unlabelled_answer():
    assert verdict("16, 3", boxed("w=3, d=16")) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("85.71", "600/7", 1.0),
        ("85.71", "85.714", 1.0),
        ("85.71", "85.7", 0.0),  # less precise than the gold
        ("0.33", "1/3", 1.0),
        ("3.14", "\\pi", 1.0),
        ("1.41", "\\sqrt{2}", 1.0),
        ("4.123105625617661", "\\sqrt{17}", 1.0),
        ("16386.20", "16386.17", 0.0),
    ],
)
def test_a_rounded_decimal_gold_states_its_precision(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("5", "5.0", 1.0),
        ("5", "5.00", 1.0),
        ("-3", "-3.0", 1.0),
        ("1000", "1000.0", 1.0),
        ("5", "5.001", 0.0),
        ("5.001", "5", 0.0),
    ],
)
def test_an_integer_gold_and_a_float_equal_to_it(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    ("response", "places", "expected"),
    [("0.333333", 6, 1.0), ("0.3333", 6, 0.0), ("0.33", 2, 1.0), ("0.\\overline{3}", 6, 1.0)],
)
def test_a_decimal_answer_to_an_exact_gold_needs_decimal_places(response, places, expected):
    # the decimal_places rule alone; rounded_digits (tests/verifiers/math/test_math_recall.py) can accept more
    assert verdict("\\frac{1}{3}", boxed(response), decimal_places=places, rounded_digits=0) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("(-1,1)", "\\{x|-1<x<1\\}", 1.0),
        ("(-1,1)", "\\{x \\mid -1 < x < 1\\}", 1.0),
        ("(-1,1)", "-1<x<1", 1.0),
        ("(-1,1)", "x \\in (-1,1)", 1.0),
        ("(-1, 1)", "[-1, 1]", 0.0),
        ("[2, \\infty)", "x \\ge 2", 1.0),
        ("(-\\infty, -8) \\cup (8, \\infty)", "x < -8 \\text{ or } x > 8", 1.0),
        ("(-\\infty, -8) \\cup (8, \\infty)", "|x| > 8", 1.0),
        ("(-\\infty,-8)\\cup (8,\\infty)", "(-\\infty, -8) \\cup [8, \\infty)", 0.0),
        (
            "1\\leq|z|\\leq \\frac{3}{2}",
            "z \\in \\left[-\\frac{3}{2}, -1\\right] \\cup \\left[1, \\frac{3}{2}\\right]",
            1.0,
        ),
    ],
)
def test_set_builder_inequalities_intervals_and_unions(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


def test_a_relation_answer_to_a_set_gold_follows_policy():
    assert verdict("x \\in [-2,7]", boxed("-2 \\le x \\le 7")) == 1.0
    assert verdict("x \\in [-2,7]", boxed("-2 \\le x \\le 7"), relations_as_sets=False) == 0.0
    assert verdict("-2 \\le x \\le 7", boxed("x \\in [-2,7]"), relations_as_sets=False) == 1.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\\frac{\\pi}{2}", "$\\boxed{90^\\circ}$", 1.0),
        ("\\frac{\\pi}{2}", "The angle is 90°.", 1.0),
        ("\\frac{\\pi}{2}", "$\\boxed{90 \\text{ degrees}}$", 1.0),
        ("90^\\circ", "$\\boxed{\\frac{\\pi}{2}}$", 1.0),
        ("45^\\circ", "$\\boxed{\\pi/4}$", 1.0),
        ("30", "$\\boxed{30^\\circ}$", 1.0),
        ("\\frac{\\pi}{6}", "$\\boxed{30}$", 0.0),  # no degree mark: 30 radians
    ],
)
def test_degrees_and_radians_where_the_gold_is_an_angle(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)", 1.0),
        ("(1,2)", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", 1.0),
        ("(1,2)", "\\begin{pmatrix} 1 & 2 \\end{pmatrix}", 1.0),
        ("(1,2)", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}", 0.0),
        ("\\begin{pmatrix}0&0\\\\0&1\\end{pmatrix}", "\\begin{bmatrix} 0 & 0 \\\\ 0 & 1 \\end{bmatrix}", 1.0),
    ],
)
def test_pmatrix_and_tuples(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    ("gold", "response", "rename", "expected"),
    [
        ("f(x)=x", "f(z)=z", "bound", 1.0),
        ("f(x) = 2x+1", "f(t) = 2t + 1", "bound", 1.0),
        ("k\\pi", "n\\pi", "bound", 1.0),
        ("x = k\\pi, k \\in \\mathbb{Z}", "x = n\\pi", "bound", 1.0),
        ("x + 1", "y + 1", "bound", 0.0),
        ("x + 1", "y + 1", "always", 1.0),
        ("k\\pi", "n\\pi", "never", 0.0),
    ],
)
def test_function_and_bound_variable_renaming(gold, response, rename, expected):
    assert verdict(gold, boxed(response), rename_variables=rename) == expected


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("[2, \\infty)", "[2, ∞)"),
        ("(-\\infty, 1) \\cup (2, \\infty)", "(-∞, 1) ∪ (2, ∞)"),
        ("x \\le 3", "x ≤ 3"),
        ("x \\ge 5", "x ≥ 5"),
        ("2\\pi", "2π"),
        ("\\frac{\\sqrt{2}}{2}", "√2/2"),
        ("2\\sqrt{3}", "√12"),
        ("90^\\circ", "90°"),
        ("-5", "−5"),
    ],
)
def test_unicode(gold, response):
    assert verdict(gold, boxed(response)) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("\\frac{5}{2}", "2\\frac{1}{2}"),
        ("2.5", "2 1/2"),
        ("-\\frac{4}{3}", "-1\\frac{1}{3}"),
        ("918\\frac{1}{2}", "918.5"),
    ],
)
def test_mixed_numbers(gold, response):
    assert verdict(gold, boxed(response)) == 1.0


@pytest.mark.parametrize("response", ["**73**", "The answer is **73**.", "Total: **73** apples"])
def test_markdown(response):
    assert verdict("73", response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("C", "(C)", 1.0),
        ("C", "C.", 1.0),
        ("C", "$\\boxed{C}$", 1.0),
        ("C", "$\\boxed{\\text{(C)}}$", 1.0),
        ("C", "The answer is (C).", 1.0),
        ("C", "**C**", 1.0),
        ("C", "C. x = 42", 1.0),
        ("C. x = 42", "C", 1.0),
        ("42", "C. x = 42", 1.0),
        ("(B)", "B", 1.0),
        ("B", "The answer is C.", 0.0),
        ("C", "$\\boxed{42}$", 0.0),
    ],
)
def test_multiple_choice_letters(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("10:30", "10:30 a.m.", 1.0),
        ("3:00 PM", "15:00", 1.0),
        ("10:30", "\\text{10:30 a.m.}", 1.0),
        ("12:00", "1:00", 0.0),
    ],
)
def test_times(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("\\text{Evelyn}", "Evelyn", 1.0),
        ("\\text{odd}", "Odd", 1.0),
        ("yes", "Yes.", 1.0),
        ("\\text{No}", "no", 1.0),
        (
            "\\text{The midpoints form a regular hexagon}",
            "$\\boxed{\\text{the midpoints form a regular hexagon}}$",
            1.0,
        ),
        ("odd", "\\text{oddd}", 0.0),
        ("\\text{Evelyn}", "$\\boxed{\\text{Briana}}$", 0.0),
    ],
)
def test_text_answers_compare_after_normalisation(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("\\sqrt{3} - 1", "-1 + sqrt(3)"),
        ("2^{1/4}", "2**(1/4)"),
        ("\\frac{\\sqrt2}{2}", "sqrt(2)/2"),
        ("\\frac{3\\sqrt{5}}{7}", "(3*sqrt(5))/7"),
        ("\\frac{\\pi}{4}", "pi/4"),
        ("(x-2)(x+2)", "x^2 - 4"),
        ("\\frac{\\sqrt{3}}{6}", "1/(2*sqrt(3))"),
    ],
)
def test_bare_answers_without_latex(gold, response):
    assert verdict(gold, response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("1000", "\\boxed{1,000}"),
        ("7425000", "7,425,000"),
        ("1000", "1 000"),
        ("1000", "\\boxed{\\$1,000}"),
        ("1500", "\\boxed{1.5e3}"),
        ("1500", "\\boxed{1.5 \\times 10^{3}}"),
        ("15000", "\\boxed{\\$15,\\!000}"),
        ("14916", "Final Answer: The final answer is $14{,}916$. I hope it is correct."),
        ("1000.99", "1000,99"),
        ("0.5", "\\boxed{.5}"),
        ("0.75", "\\boxed{3/4}"),
        ("-0.75", "\\boxed{\\frac{-3}{4}}"),
    ],
)
def test_number_spellings(gold, response):
    assert verdict(gold, response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"), [("12", "(1,2)"), ("12", "1,23"), ("32349", "\\boxed{32, 349}"), ("2", "[0]")]
)
def test_commas_in_structures_are_not_thousands_separators(gold, response):
    assert verdict(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("x^2+2x+1", "(x+1)^2", 1.0),
        ("\\tan^2(y)+1", "\\sec^2(y)", 1.0),
        ("96-10\\sqrt{21}", "\\frac{6\\sqrt{1789-240\\sqrt{21}}+8\\sqrt{1236-240\\sqrt{21}}}{5}", 1.0),
        ("\\frac{5\\sqrt{42}}{27}", "\\frac{10\\sqrt{10.5}}{27}", 1.0),
        ("e^{i\\pi}", "-1", 1.0),
        ("3+2i", "3-2i", 0.0),
        ("3^{2025}", "2^{2025}", 0.0),
        ("2x+4y-3=0", "y=-\\frac{1}{2}x+\\frac{3}{4}", 1.0),
        ("x > 5", "x < 5", 0.0),
        ("x < 1", "-x > -1", 1.0),
        ("f(2) < f(1) < f(4)", "f(2) < f(1) < f(4)", 1.0),
        ("7.2\\%", "7.2\\%+1", 0.0),
    ],
)
def test_symbolic_equivalence(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("1, 2, 3", "3,2,1", 1.0),
        ("-2, 1", "The roots are $x = -2$ and $x = 1$.", 1.0),
        ("\\pm 2021", "\\boxed{\\{-2021, 2021\\}}", 1.0),
        ("\\pm 2021", "\\boxed{2021}", 0.0),
        (
            "(2,1),(1,2),(-1,-20),(-20,-1)",
            "\\boxed{(1, 2)}, \\boxed{(2, 1)}, \\boxed{(-1, -20)}, \\boxed{(-20, -1)}",
            1.0,
        ),
        ("1, 2, 3", "\\boxed{1, 2}", 0.0),
    ],
)
def test_lists_and_sets(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("40/9", "4 4/9", 1.0),
        ("-40/9", "-4 4/9", 1.0),
        ("40/9", "The answer is 4 4/9.", 1.0),
        ("4", "The answer is 4 4/9.", 0.0),  # never the whole-number prefix
        ("12", "11 6/6", 0.0),  # not a mixed number
        ("40/900", "4 4/9%", 1.0),
    ],
)
def test_mixed_numbers_in_prose(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("100000000000", "99999999999", 0.0),
        ("100000000001000000000", "100000000000000000000", 0.0),
        ("1234", "1\\,234", 1.0),
        ("12345678", "12\\,345\\,678", 1.0),
        ("\\sqrt{2}", "1.4142135623730951", 1.0),
    ],
)
def test_large_integers_are_exact_and_long_decimals_are_close(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("25_{6}", "25_{7}", 0.0),
        ("204_5", "204", 1.0),  # the base left off
        ("\\begin{pmatrix} 3 \\\\ 3 \\\\ -3 \\end{pmatrix}", "-\\begin{pmatrix} 3 \\\\ 3 \\\\ -3 \\end{pmatrix}", 0.0),
        ("x = 4", "y = 4", 0.0),
        ("3 - 2f(x)", "3 - 2f(y)", 0.0),  # renaming is for definitions, not for any expression
        ("b = 0", "-b = 0", 1.0),
    ],
)
def test_wrong_answers_found_by_perturbing_real_golds(gold, response, expected):
    assert verdict(gold, boxed(response)) == expected


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 42 because geometry proves it",
        "42 because geometry proves it",
        "First compute 6*7.\n42",
        "Final answer: 42",
    ],
)
def test_prose_wrapped_answers(response):
    assert verdict("42", response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("1,22", "1.22", 1.0),  # a decimal comma
        ("1000.99", "1000,99", 1.0),
        ("0,111", "0.111", 1.0),
        ("15,600", "15600", 1.0),  # a thousands separator
        ("1, 2", "1,2", 1.0),  # a list
        ("0,1", "0.1", 0.0),  # the roots 0 and 1, not a tenth
        ("-2,1", "-2.1", 0.0),
        ("-2,1", "1, -2", 1.0),
    ],
)
def test_a_comma_between_digits_is_read_both_ways_only_when_ambiguous(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        # a decimal comma after a label, before a unit, a currency or a percent sign
        ("2.74", "\\boxed{x = 2,74}", 1.0),
        ("2.74", "Total: 2,74", 1.0),
        ("2.74", "Soucis : 2,74 $ a..", 1.0),  # Math-Verify's test_all.py literal
        ("2.74", "The total is 2,74 €.", 1.0),
        ("2.74", "\\boxed{2,74 \\text{ m}}", 1.0),
        ("12.25\\%", "\\boxed{12,25\\%}", 1.0),
        ("2.74", "\\boxed{2,75 €}", 0.0),
        ("2, 74", "\\boxed{x = 2,74}", 1.0),  # still also the list it may be
        # one digit after the comma is a decimal only where a list cannot be meant
        ("1.5", "\\boxed{1,5 m}", 1.0),  # roots carry no unit
        ("12.5\\%", "\\boxed{12,5 \\%}", 1.0),
        ("-0.5", "\\boxed{-0,5}", 1.0),  # "-0, 5" is no list anyone writes
        ("0, 5", "\\boxed{-0,5}", 0.0),
        ("1.5", "\\boxed{1,5}", 0.0),  # the roots 1 and 5
        ("0.1", "\\boxed{x = 0,1}", 0.0),
    ],
)
def test_decimal_commas_where_a_list_cannot_be_meant(gold, response, expected):
    assert verdict(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("28\\%", "28"),
        ("85.71", "600/7"),
        ("1, 2", "2, 1"),
        ("k\\pi", "n\\pi"),
        ("x \\in [-2,7]", "-2 \\le x \\le 7"),
    ],
)
def test_strict_turns_every_lenient_reading_off(gold, response):
    assert verdict(gold, boxed(response)) == 1.0
    assert verdict(gold, boxed(response), strict=True) == 0.0
