"""rewardhub's NeMo-Gym servers against the released servers' own ``verify()``, on cases nobody wrote down.

``nemo_gym_corpus`` generates (seeded) rows and responses over the servers' behaviour: mcqa's four
grading modes (in the row, or in the server's config over another in the row: ``mcqa:{mode}``),
gpqa_diamond with and without options, and reasoning_gym entries of eighteen families and of three
non-default configs; responses written the ways models write them (think blocks, boxes,
``\\boxed{[B]}``, an option's text in the box, ``Answer: B``, tags, prose, malformed, empty).
NeMo-Gym 0.7.0's servers score each case offline in a child process (``nemo_gym_side.py
differential``); rewardhub scores the same requests through ``/v1/compat/nemo-gym/{server}/verify_batch``
of a running service. The agreement and every class of disagreement are printed; below 0.99 fails.

Deliberate differences are :data:`CONVENTIONS`, each named, counted and printed, never silent.

``math_with_judge`` has its own corpus (``nemo_gym_corpus.math_corpus``) and reference, the server's
library path with its judge off (``nemo_gym_side.math_differential``), and its own conventions
(:data:`MATH_CONVENTIONS`): rewardhub's math reading where it is deliberately not math-verify's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from nemo_gym_support import needs_nemo_gym, nemo_gym, tally_agreement

AGREEMENT = 0.99

CONVENTIONS: dict[str, str] = {
    "reasoning_gym/json_tuples": "an arc_agi entry's boards arrive as JSON lists; rewardhub makes them tuples again, "
    "as the family generated them, so the right board scores 1 (the server, reading the JSON row: 0.05)",
}
"""Disagreements that are rewardhub's conventions, by class (docs/compat.md names them too)."""


def convention(case: dict[str, Any], answer: dict[str, Any]) -> str | None:
    """The convention a disagreement is, or None."""
    if case["server"] == "reasoning_gym" and case["row"]["metadata"]["source_dataset"] == "arc_agi":
        if case["reference_reward"] == pytest.approx(0.05) and answer["reward"] == 1.0:
            return "reasoning_gym/json_tuples"
    return None


def route(case: dict[str, Any]) -> str:
    """The server's name, with the server config's mode where the case sets one (``mcqa:{mode}``)."""
    return f"{case['server']}:{case['server_mode']}" if case["server_mode"] else case["server"]


def score(http: httpx.Client, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = [{}] * len(cases)
    for server in sorted({route(case) for case in cases}):
        indices = [i for i, case in enumerate(cases) if route(case) == server]
        requests = [cases[i]["request"] for i in indices]  # exactly what the server got
        if server == "reasoning_gym":  # the first sample imports reasoning-gym in each worker
            spec = {"name": "reasoning_gym", "config": {"timeout_s": 60}}
            warmed = http.post(
                f"/v1/compat/nemo-gym/{server}/verify_batch",
                json={"verify_requests": [{**requests[0], "verifier": spec}] * 4},
            )
            assert warmed.status_code == 200, warmed.text
        answer = http.post(f"/v1/compat/nemo-gym/{server}/verify_batch", json={"verify_requests": requests})
        assert answer.status_code == 200, answer.text
        for i, verified in zip(indices, answer.json()["verify_responses"], strict=True):
            answers[i] = verified
    return answers


def label(case: dict[str, Any]) -> str:
    family = case["row"].get("metadata", {}).get("source_dataset")
    mode = case["server_mode"] or case["row"].get("grading_mode") or ""
    return "/".join(part for part in (case["server"], family, mode, case["shape"]) if part)


@needs_nemo_gym
def test_the_servers_agree_with_the_released_servers_on_a_generated_corpus(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = nemo_gym("differential")
    answers = score(http, cases)
    agreed, conventions, differ = tally_agreement(cases, answers, convention, CONVENTIONS, label, capsys)
    assert (agreed + sum(conventions.values())) / len(cases) >= AGREEMENT, differ
    assert (len(cases) - sum(conventions.values()) - sum(differ.values())) == agreed
    assert conventions["reasoning_gym/json_tuples"] > 0  # the corpus reaches the convention it names


MATH_AGREEMENT = 0.99

MATH_CONVENTIONS: dict[str, str] = {
    "math/last_box_after_correction": "a response that boxes an answer, takes it back and boxes another is read by "
    "its last box, the corrected answer (the server's math-verify gathers every box of the text into one set)",
    "math/labelled_box": "'\\boxed{\\text{Answer: } 904}' answers 904: a label in the box names the value (the "
    "server's math-verify reads the label into the expression and never matches)",
    "math/gold_sentence": "a gold that is a sentence ('\\text{The final answer is (B) } 91') or a contest's choice "
    "label with the option ('\\textbf{(C) }\\frac{1}{3}') is read as the choice with its option: the letter or "
    "the option's value answers it (the server's math-verify cannot read the gold and scores every response 0)",
    "math/parts_in_order": "a gold boxed in parts that prose separates ('(a) \\boxed{9}; (b) \\boxed{91}') is "
    "answered part by part, in order: '9; 91' or '9, 91' scores 1, '91, 9' scores 0 (the server's math-verify "
    "reads the parts as one set, in any order, or by their last box)",
    "math/thin_space_thousands": "'904\\,091' is the number 904091, a TeX thousands space (the server's "
    "math-verify reads it as the product or sum of 904 and 091)",
    "math/relation_as_set": "'-4 < x \\le 9' answers the interval '(-4, 9]' it describes (the math verifier's "
    "relations_as_sets; the server's math-verify does not compare a relation with a set by default)",
}
"""math_with_judge disagreements that are rewardhub's math conventions, by class (docs/compat.md names them)."""


def math_convention(case: dict[str, Any], answer: dict[str, Any]) -> str | None:
    """The convention a math_with_judge disagreement is, or None; each in the one direction it names."""
    family, shape = case["shape"].split("/", 1)
    text, server, ours = case["text"], case["reference_reward"], answer["reward"]
    if family in ("choice_sentence", "choice_label") and (server, ours) == (0.0, 1.0):
        return "math/gold_sentence"
    if shape.startswith("revised"):
        return "math/last_box_after_correction"
    if shape == "labelled_box" and (server, ours) == (0.0, 1.0):
        return "math/labelled_box"
    if family == "multi_part_boxes" and (server, ours) == (1.0, 0.0):
        return "math/parts_in_order"  # the parts out of order (the server: one set)
    if family == "multi_part_boxes" and shape.startswith("boxed_right") and (server, ours) == (0.0, 1.0):
        return "math/parts_in_order"  # the parts boxed one by one (the server: its last box)
    if family == "thousands" and "\\," in text and (server, ours) == (0.0, 1.0):
        return "math/thin_space_thousands"
    if family.endswith("interval") and ("<" in text or "\\ge" in text) and (server, ours) == (0.0, 1.0):
        return "math/relation_as_set"
    return None


@needs_nemo_gym
def test_math_with_judge_agrees_with_the_released_servers_library_path(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    """``math_with_judge`` on ``nemo_gym_corpus.math_corpus``: golds of 25 shapes (integers, fractions,
    radicals, intervals, sets, tuples, parts, words, units, money, percentages, degrees, equations,
    sentences, choice labels), each with its right spellings boxed, near misses, and the ways models
    box (think blocks, corrections, hedges, labels, display math, unclosed and empty boxes), against
    the server's library path (``nemo_gym_side.math_differential``)."""
    cases = nemo_gym("math_differential")
    answers: list[dict[str, Any]] = []
    for start in range(0, len(cases), 100):  # the service's client waits 60 s per request
        answers += score(http, cases[start : start + 100])
    differ: Counter[str] = Counter()
    conventions: Counter[str] = Counter()
    agreed = 0
    for case, answer in zip(cases, answers, strict=True):
        judged = answer["rewardhub"]["status"] == "ok"
        if judged and answer["reward"] == case["reference_reward"]:
            agreed += 1
        elif judged and (name := math_convention(case, answer)) is not None:
            conventions[name] += 1
        else:
            reward = answer["reward"] if judged else f"masked ({answer['rewardhub']['error']})"
            differ[f"{case['shape']}: server {case['reference_reward']}, rewardhub {reward}"] += 1
    with capsys.disabled():
        print(
            f"\nNeMo-Gym 0.7.0 math_with_judge (library) vs rewardhub: {agreed}/{len(cases)} agree ({agreed / len(cases):.4f})"
        )
        for name, count in conventions.most_common():
            print(f"  convention {name}: {count} ({MATH_CONVENTIONS[name]})")
        for what, count in differ.most_common():
            print(f"  DIFFER x{count}: {what}")
    assert (agreed + sum(conventions.values())) / len(cases) >= MATH_AGREEMENT, differ
    assert set(conventions) == set(MATH_CONVENTIONS)  # the corpus reaches every convention it names
