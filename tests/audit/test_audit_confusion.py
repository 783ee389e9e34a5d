"""The audit's arithmetic: what counts as accepted, as a false positive, and as a rewarded exploit."""

from __future__ import annotations

import pytest

from rewardhub.audit.confusion import Confusion, audit_report, class_counts, exploit_entry, failure_class, judge_case
from rewardhub.types import Result

THRESHOLD = 1.0


def case(index: int, expected: bool | float, result: Result) -> object:
    label = expected if isinstance(expected, bool) else expected >= THRESHOLD
    return judge_case(index, f"c{index}", expected, label, result, THRESHOLD, "response", "gold")


def right(reason: str = "equivalent") -> Result:
    return Result.ok(1.0, reason=reason)


def wrong(reason: str = "not_equivalent") -> Result:
    return Result.ok(0.0, reason=reason)


OUTCOMES = [
    case(0, True, right()),  # tp
    case(1, True, right()),  # tp
    case(2, True, wrong("no_answer")),  # fn
    case(3, True, Result.failed("boom", reason="too_complex")),  # fn: a crash never accepts
    case(4, False, right("equivalent")),  # fp
    case(5, False, wrong()),  # tn
    case(6, False, Result.failed("timed out", status="timeout")),  # tn
]


def test_counts_and_rates_by_hand() -> None:
    confusion = Confusion.of(OUTCOMES)
    assert (confusion.tp, confusion.fp, confusion.fn, confusion.tn) == (2, 1, 2, 2)
    assert confusion.precision == pytest.approx(2 / 3)
    assert confusion.recall == pytest.approx(2 / 4)
    assert confusion.accuracy == pytest.approx(4 / 7)


def test_undefined_rates_are_none_not_a_made_up_number() -> None:
    nothing_accepted = Confusion.of([case(0, False, wrong())])
    assert nothing_accepted.precision is None and nothing_accepted.recall is None
    assert nothing_accepted.accuracy == 1.0
    assert Confusion.of([]).accuracy is None


def test_a_numeric_expectation_is_right_at_or_above_the_threshold() -> None:
    assert case(0, 1.0, right()).kind == "true_positive"
    assert case(0, 0.5, right()).kind == "false_positive"
    partial = judge_case(0, None, 0.5, 0.5 >= 0.5, Result.ok(0.5), 0.5, "r", "g")
    assert partial.kind == "true_positive"


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (Result.ok(0.0, reason="not_equivalent"), "not_equivalent"),
        (Result.ok(1.0, reason="equivalent", rule="relation set"), "equivalent (relation set)"),
        (Result.failed("x", reason="too_complex"), "error: too_complex"),
        (Result.failed("slow", status="timeout"), "timeout"),
        (Result.ok(0.0, short_circuit="master_key"), "master_key"),
        (
            Result.ok(0.0, tests=[{"verdict": "wrong_answer", "passed": False}, {"verdict": "ok", "passed": True}]),
            "wrong_answer",
        ),
        (Result.ok(0.3), "scored"),
    ],
)
def test_failure_class_names_status_reason_and_rule(result: Result, expected: str) -> None:
    assert failure_class(result) == expected


def test_class_counts_split_false_positives_from_false_negatives() -> None:
    assert class_counts(OUTCOMES) == {
        "false_positive": {"equivalent": 1},
        "false_negative": {"no_answer": 1, "error: too_complex": 1},
    }


def test_an_exploit_is_rewarded_by_any_positive_score_with_status_ok() -> None:
    assert exploit_entry("e", "a", "i", "r", Result.ok(0.25))["rewarded"]
    assert not exploit_entry("e", "a", "i", "r", Result.ok(0.0))["rewarded"]
    assert not exploit_entry("e", "a", "i", "r", Result.failed("crash", score=1.0))["rewarded"]


def test_the_report_has_exactly_the_documented_shape_with_leaks_first() -> None:
    exploits = [
        exploit_entry("safe", "a", "i", "r", Result.ok(0.0)),
        exploit_entry("leak", "a", "i", "r", Result.ok(1.0)),
    ]
    report = audit_report("math", OUTCOMES, exploits)
    assert list(report) == [
        "verifier",
        "n",
        "precision",
        "recall",
        "accuracy",
        "false_positives",
        "false_negatives",
        "exploits",
    ]
    assert report["n"] == 7
    assert [e["index"] for e in report["false_positives"]] == [4]
    assert [e["index"] for e in report["false_negatives"]] == [2, 3]
    assert report["false_negatives"][1]["class"] == "error: too_complex"
    assert list(report["exploits"]) == ["tried", "rewarded", "cases"]
    assert report["exploits"]["tried"] == 2 and report["exploits"]["rewarded"] == 1
    assert [e["id"] for e in report["exploits"]["cases"]] == ["leak", "safe"]
