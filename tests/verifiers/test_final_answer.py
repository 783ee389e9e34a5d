"""Which final answer a response commits to, under the reading policy: the one reader that ``math``,
the group verifiers and the judge share (``rewardhub.verifiers.final_answer``)."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rewardhub.models.hardening import extract_final_answer as judge_reads
from rewardhub.types import Sample
from rewardhub.verifiers.final_answer import extract_gold, find_boxed, read_final_answer
from rewardhub.verifiers.group.answers import extract_final_answer as group_text_reads
from rewardhub.verifiers.group.answers import read_answer
from rewardhub.verifiers.math import MathVerifier

DATA = Path(__file__).parents[1] / "data" / "math_qwen_cot_sample.jsonl"


def first(response: str, **policy: object) -> tuple[str, str] | None:
    found = read_final_answer(response, **policy)
    return (found[0].text, found[0].anchor) if found else None


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("so \\boxed{3}, then \\boxed{5}", ("5", "boxed")),
        ("\\boxed{\\frac{1}{2}}", ("\\frac{1}{2}", "boxed")),
        ("\\fbox{7}", ("7", "boxed")),
        ("\\boxed 7.", ("7", "boxed")),
        ("nested \\boxed{\\boxed{4}}", ("\\boxed{4}", "boxed")),
        ("Janet sells 9 eggs.\n#### 18", ("18", "hashes")),
        ("The answer is 42", ("42", "answer_phrase")),
        ("Final Answer: The final answer is $28 \\%$. I hope it is correct.", ("28 \\%", "answer_phrase")),
        ("Final Answer: The largest $n$ is 34.", ("34", "answer_phrase")),
        ("The answer is not 42, it is 41.", ("41", "answer_phrase")),
        ("The answer is 42, not 41.", ("42", "answer_phrase")),
        ("Final Answer:\n$$\\frac{3}{4}$$", ("\\frac{3}{4}", "answer_phrase")),
        ("答案：每份应该是 (\\frac{2}{5}) 吨。", ("\\frac{2}{5}", "answer_phrase")),
        ("The answer is (B).", ("(B)", "answer_phrase")),
        ("The answer is $12$ and $13$.", ("12, 13", "answer_phrase")),
        ("-1 + sqrt(3)", ("-1 + sqrt(3)", "whole")),
        ("Therefore, the probability that Alice wins is 2/3. I hope it is correct.", ("2/3", "final_line")),
        ("所以一共有3 + 10 = 13只鸟和鹳鸟。", ("13", "final_line")),
        ("donc 353 g - 79 g = 274 g. Donc, il a déjà 79 g de cire.", ("79", "final_line")),
        ("the number is not 10 which is 1,000.99€", ("1,000.99", "final_line")),
        ("Soucis : 2,74 $ a..", ("2,74", "final_line")),  # an amount in prose ("2,74 $"), not a bare answer
        ("$x^2+1", ("$x^2+1", "whole")),  # a lone $ before math is a broken delimiter, not a currency
        ("Express the answer as a percentage: 2 / 8 * 100% = 25%\nA: 25", ("25", "answer_phrase")),
    ],
)
def test_anchors_and_the_stated_answer(response, expected):
    assert first(response) == expected


def test_an_answer_phrase_after_an_intermediate_box_wins():
    response = "so the interest is $\\boxed{255}$. Total: $10,455. Final Answer: The final answer is $10,455$."
    assert first(response) == ("10,455", "answer_phrase")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("\\boxed{1}, \\boxed{2}, \\boxed{3}", "1, 2, 3"),
        ("\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}", "(2, 2), (6, 2)"),
        ("\\boxed{1}\\boxed{2}", "1, 2"),
        ("\\boxed{1} papers and \\boxed{2} bins", "1, 2"),
        ("\\( y_1 = \\boxed{x+1} \\) and \\( y_2 = \\boxed{x-1} \\)", "x+1, x-1"),
        ("\\boxed{10} and then \\boxed{42}", "42"),
        ("\\boxed{9} \\boxed{9} \\boxed{9} \\boxed{42}", "42"),
        ("\\boxed{1} and and and or thus but \\boxed{2} and \\boxed{3}", "2, 3"),
        ("\\boxed{4}, \\boxed{4}", "4"),
        # boxes in one formula with the last are one answer, whatever stands between them there
        ("$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$", "(3, 3), (1, 1)"),
        ("$\\boxed{35 cm} ++++++ \\boxed{4}$", "35 cm, 4"),
        ("\\[ \\boxed{2} \\text{ or } \\boxed{3} \\]", "2, 3"),
        ("$\\boxed{10}$ and then $\\boxed{42}$", "42"),  # two formulas, prose between
        ("\\boxed{(3, 3)} for part (a) and \\boxed{(1, 1)}", "(1, 1)"),  # prose outside a formula
        ("\\boxed{1} no no no no no \\boxed{2}", "2"),
    ],
)
def test_boxes_join_across_list_separators_and_inside_one_formula(response, expected):
    assert find_boxed(response) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("\\boxed{\\phantom{42}}", None),  # typeset invisibly: no answer, and no number to find
        ("The answer is $\\phantom{42}$.", None),
        ("$\\boxed{\\phantom{2}} \\boxed{4}$", ("4", "boxed")),
        ("\\boxed{\\hspace{1cm}4}", ("4", "boxed")),
    ],
)
def test_invisible_typesetting_is_never_an_answer(response, expected):
    assert first(response) == expected


@pytest.mark.parametrize(
    "response",
    [
        "so the answer is \\boxed{12",  # cut off inside its final box
        "",
        "I am not sure.",
        "__import__('os').system('touch marker') or 0",
        "[open('marker', 'w') for _ in [0]] or 0",
        "<think>it is \\boxed{3}</think>",  # the answer must come after the thinking
        "the answer is 3x",  # a number glued to a variable is no number
        "#### ##",
    ],
)
def test_no_answer(response):
    assert read_final_answer(response) == []


def test_reasoning_is_skipped_after_the_last_think_tag():
    assert first("<think>maybe \\boxed{3}</think> The answer is \\boxed{2}") == ("2", "boxed")


def test_chat_template_tokens_end_the_response():
    assert first("The answer is 5. <|im_end|> The answer is 6") == ("5", "answer_phrase")


def test_anchors_policy_limits_what_counts():
    response = "The answer is 7. Anyway \\boxed{8}"
    assert first(response, anchors=("answer_phrase",)) == ("7", "answer_phrase")
    assert first("so it is 7", anchors=("boxed",), unanchored=False) is None
    assert first("so it is 7", anchors=("boxed",), unanchored=True) == ("7", "final_line")


def test_bare_numbers_policy():
    assert first("Answer $ \n 9 \n $", bare_numbers=False) is None  # inline math stays on one line
    assert first("Answer \\[ \n 9 \n \\]", bare_numbers=False) == ("9", "answer_phrase")
    assert first("so it costs 7.78", bare_numbers=False) is None


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        ("\\frac{1}{2}", "\\frac{1}{2}"),
        ("$\\frac{1}{2}$", "$\\frac{1}{2}$"),  # delimiters are normalized later, not here
        ("\\boxed{0.5}", "0.5"),
        ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "1, -2"),
        (
            "Setting $x = 1$ we get $y = 2$, and after some algebra the sum over all the cases we found is "
            "exactly what we wanted to show, so the result is $\\boxed{14{,}916}$ as claimed.",
            "14{,}916",
        ),
    ],
)
def test_gold_as_users_pass_it(gold, expected):
    assert extract_gold(gold).text == expected


def test_real_chain_of_thought_responses():
    cases = [json.loads(line) for line in DATA.read_text().splitlines()]
    for case in cases:
        found = read_final_answer(case["response"])
        assert found and found[0].anchor == "boxed", case["response"][-200:]


# -- answer tags and answers in words ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<answer>42</answer>", ("42", "answer_tag")),
        ("<answer>\\frac12</answer>", ("\\frac12", "answer_tag")),
        ("<answer>so it is \\boxed{3}</answer>", ("3", "answer_tag")),  # the tag's content is read again
        ("\\boxed{5} ... <answer>6</answer>", ("6", "answer_tag")),  # the last anchor wins
        ("<answer>6</answer> ... no, \\boxed{5}", ("5", "boxed")),
        ("<answer>1</answer> then <answer>2</answer>", ("2", "answer_tag")),
        ("<answer>The answer is 4.</answer>", ("4", "answer_tag")),
    ],
)
def test_answer_tags(response, expected):
    assert first(response) == expected


@pytest.mark.parametrize(
    "response",
    [
        "<answer></answer>",  # an explicit answer that is empty
        "<answer>I do not know</answer>",
        "The answer is <answer>4",  # cut off inside its answer tag
        "<answer>3</answer> and then <answer>4",
    ],
)
def test_an_empty_or_unclosed_tag_answers_nothing(response):
    assert read_final_answer(response) == []


@pytest.mark.parametrize(
    ("response", "words", "expected"),
    [
        ("The answer is Paris.", True, ("Paris", "answer_phrase")),
        ("The answer is Paris.", False, None),
        ("Final answer: **Paris**", True, ("Paris", "answer_phrase")),
        ("Final Answer:\nParis", True, ("Paris", "answer_phrase")),
        ("<answer>Paris</answer>", True, ("Paris", "answer_tag")),
        ("The answer is 3 apples.", True, ("3", "answer_phrase")),  # math first: the math is the answer
        ("The answer is not clear.", True, None),
        ("I checked the answer by substitution.", True, None),  # no copula: the phrase states nothing
        ("#### Paris", True, ("Paris", "hashes")),
    ],
)
def test_answers_in_words(response, words, expected):
    assert first(response, words=words) == expected


# -- one reader: math, the group verifiers and the judge read the same answer ---------------------

ONE_READING = [
    # (response, the final answer every reader finds, a gold it equals)
    ("... The answer is 4.", "4", "4"),
    ("so $x = 2$ and the final answer is $\\boxed{\\frac{1}{2}}$", "\\frac{1}{2}", "0.5"),
    ("first \\boxed{1} then \\boxed{2}", "2", "2"),
    ("Janet sells 9 eggs.\n#### 18", "18", "18"),
    ("Reasoning...\nAnswer: 17", "17", "17"),
    ("<answer>42</answer>", "42", "42"),
    ("<think>The answer is 5</think>I think it is 6", "6", "6"),  # only the part after the thinking
    ("Final Answer: The final answer is $28 \\%$. I hope it is correct.", "28 \\%", "28\\%"),
    ("The answer is not 42, it is 41.", "41", "41"),
    ("so the interest is $\\boxed{255}$. Final Answer: The final answer is $10,455$.", "10,455", "10455"),
]


@pytest.mark.parametrize(("response", "answer", "gold"), ONE_READING)
def test_every_verifier_reads_the_same_final_answer(response, answer, gold):
    assert read_final_answer(response)[0].text == answer
    assert judge_reads(response) == answer
    assert group_text_reads(response) == answer
    group = read_answer(response, "math")
    assert group is not None and group.text == answer
    result = MathVerifier().score(Sample(response=response, reference=gold), MathVerifier.Config())
    assert result.details["extracted"] == answer and result.score == 1.0, result


@pytest.mark.parametrize("response", ["I am not sure.", "so the answer is \\boxed{12", "<answer></answer>"])
def test_no_verifier_finds_an_answer_where_the_reader_finds_none(response):
    assert read_final_answer(response) == []
    assert judge_reads(response) is None
    assert group_text_reads(response) is None
    assert read_answer(response, "math") is None
    result = MathVerifier().score(Sample(response=response, reference="12"), MathVerifier.Config())
    assert result.details["reason"] == "no_answer"


# -- linear time on pathological responses ----------------------------------------------------------

PATHOLOGICAL: dict[str, tuple[str, int]] = {
    # unit repeated, repetitions at the small size (each reads for a few milliseconds there)
    "unmatched $$": ("$$a", 2_000),
    "lone $": ("$", 12_000),
    "unclosed boxes": ("\\boxed{", 8_000),
    "answer phrases": ("the answer is ", 3_000),
    "open parentheses": ("(", 24_000),
    "unclosed answer tags": ("<answer>", 40_000),
    "a long list": ("1, ", 4_000),
}
GROWTH = 8  # a linear reader takes ~8x as long on 8x the text; a quadratic one ~64x
BOUND = 24  # well above linear's 8 (allocation, caches), well below quadratic's 64


def _best_seconds(read: Callable[[str], object], unit: str, repetitions: int) -> float:
    """The least CPU time of three runs, each on a fresh string (the reader caches math spans per
    text), with the garbage collector paused: CPU time, not wall time, so a loaded machine does
    not make a linear reader look quadratic."""
    best = float("inf")
    for run in range(3):
        text = f"{run}{unit * repetitions}"
        gc.disable()
        try:
            started = time.process_time()
            read(text)
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
    return best


def _growth(read: Callable[[str], object], unit: str, repetitions: int) -> float:
    return _best_seconds(read, unit, GROWTH * repetitions) / _best_seconds(read, unit, repetitions)


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_pathological_long_responses_take_linear_time(name):
    unit, repetitions = PATHOLOGICAL[name]
    growth = _growth(read_final_answer, unit, repetitions)
    print(f"{name}: {GROWTH}x the text took {growth:.1f}x the time")
    assert growth < BOUND


def test_the_growth_measure_catches_a_quadratic_reader():
    def quadratic(text: str) -> int:  # rescans the rest of the text at every opener, as a lazy regex would
        return sum(text.count("$", i) for i in range(0, len(text), 3))

    growth = _growth(quadratic, "$$a", 2_000)
    print(f"a quadratic reader: {GROWTH}x the text took {growth:.1f}x the time")
    assert growth > BOUND
