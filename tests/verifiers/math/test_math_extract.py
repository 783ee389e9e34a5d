"""Which final answer a response commits to, under the extraction policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardhub.verifiers.math.extract import extract_answer, extract_gold, find_boxed

DATA = Path(__file__).parents[2] / "data" / "math_qwen_cot_sample.jsonl"


def first(response: str, **policy: object) -> tuple[str, str] | None:
    found = extract_answer(response, **policy)
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
    ],
)
def test_boxes_join_only_across_list_separators(response, expected):
    assert find_boxed(response) == expected


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
    assert extract_answer(response) == []


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
        found = extract_answer(case["response"])
        assert found and found[0].anchor == "boxed", case["response"][-200:]


def test_pathological_long_responses_are_linear():
    # quadratic regexes would take minutes on these; linear scanning takes milliseconds
    for response in ("$$a" * 40_000, "$" * 100_000, "\\boxed{" * 30_000, "the answer is " * 8_000, "(" * 100_000):
        extract_answer(response)
