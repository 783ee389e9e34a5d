"""The ``math`` verifier on Math-Verify 0.9.0's own equivalence test literals, taken from its
released sdist (``math_verify_literals.py extract``: every labelled gold/prediction pair of its
tests, with the settings each test passes), printed as precision and recall against its labels.

Precision stays at or above 0.99; the labels we do not follow are exactly the conventions listed
in ``math_verify_literals.CONVENTIONS``, each with its reason: a new disagreement fails this test
until it is fixed or listed there with a reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from math_verify_literals import CONVENTIONS, LITERALS, line, load, metrics, score  # noqa: E402


def test_math_verify_own_literals():
    cases = load(LITERALS)
    verdicts = score(cases)
    labels = [case["expected"] for case in cases]
    measured = metrics([v["match"] for v in verdicts], labels)
    print("\n" + line("Math-Verify 0.9.0 test literals", measured))
    disagreements = {
        case["source"]: case
        for case, verdict in zip(cases, verdicts, strict=True)
        if verdict["match"] != case["expected"]
    }
    for source, case in disagreements.items():
        why = CONVENTIONS.get(source, "NOT A LISTED CONVENTION")
        print(f"  {source}: labelled {case['expected']}: {why}")
    assert len(cases) == 276 and sum(labels) == 233  # what extract reads from the 0.9.0 sdist
    assert measured["precision"] >= 0.99
    assert set(disagreements) == set(CONVENTIONS)
