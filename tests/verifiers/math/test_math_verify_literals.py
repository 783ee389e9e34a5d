"""The ``math`` verifier on Math-Verify 0.9.0's own equivalence test literals, taken from its
released sdist (``math_verify_literals.py extract``: every labelled gold/prediction pair of its
tests, with the settings each test passes), printed as precision and recall against its labels,
beside Math-Verify's own score on them.

Under the default reading, precision stays at or above 0.99 and the labels we do not follow are
exactly the conventions listed in ``math_verify_literals.CONVENTIONS``, each with its reason and
its count: a new disagreement fails this test until it is fixed or listed there with a reason.
Under ``reading: "math_verify"`` (the request asks for Math-Verify's reading), accuracy is at least
Math-Verify's own and precision at least 0.99.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from math_verify_literals import CONVENTIONS, LITERALS, baseline, line, load, metrics, score  # noqa: E402


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    cases = load(LITERALS)
    assert len(cases) == 276 and sum(c["expected"] for c in cases) == 233  # what extract reads from the 0.9.0 sdist
    return cases


@pytest.fixture(scope="module")
def reference(cases: list[dict]) -> list[bool]:
    """Math-Verify 0.9.0's own verdicts, called as its tests call it."""
    verdicts = baseline(cases)
    print("\n" + line("math-verify 0.9.0 itself", metrics(verdicts, [c["expected"] for c in cases])))
    return verdicts


def test_the_default_reading_differs_only_by_the_named_conventions(cases, reference):
    verdicts = score(cases)
    labels = [case["expected"] for case in cases]
    measured = metrics([v["match"] for v in verdicts], labels)
    agreement = sum(v["match"] == m for v, m in zip(verdicts, reference, strict=True)) / len(cases)
    print(
        "\n"
        + line("rewardhub math, reading rewardhub", measured)
        + f"; verdicts agree with math-verify {agreement:.1%}"
    )
    disagreements = {
        case["source"]: case
        for case, verdict in zip(cases, verdicts, strict=True)
        if verdict["match"] != case["expected"]
    }
    for source, case in disagreements.items():
        why = CONVENTIONS.get(source, "NOT A LISTED CONVENTION")
        print(f"  convention (1 case) {source}: labelled {case['expected']}: {why}")
    assert measured["precision"] >= 0.99
    assert set(disagreements) == set(CONVENTIONS)


def test_the_math_verify_reading_scores_at_least_math_verify(cases, reference):
    verdicts = score(cases, reading="math_verify")
    labels = [case["expected"] for case in cases]
    measured = metrics([v["match"] for v in verdicts], labels)
    agreement = sum(v["match"] == m for v, m in zip(verdicts, reference, strict=True)) / len(cases)
    print(
        "\n"
        + line("rewardhub math, reading math_verify", measured)
        + f"; verdicts agree with math-verify {agreement:.1%}"
    )
    assert measured["agreement"] >= metrics(reference, labels)["agreement"]
    assert measured["precision"] >= 0.99
    assert all(v["result"].details["reading"] == "math_verify" for v in verdicts)
    by_source = {case["source"]: verdict["match"] for case, verdict in zip(cases, verdicts, strict=True)}
    for source in CONVENTIONS:  # each convention the default reading keeps is Math-Verify's label here
        assert by_source[source] == next(c["expected"] for c in cases if c["source"] == source)
