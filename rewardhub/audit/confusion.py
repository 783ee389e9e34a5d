"""The audit's arithmetic: verdicts against labels, confusion counts, failure classes. Pure functions.

A verifier *accepts* a response when its result has status ``ok`` and a score at or above the
threshold. A crash or a timeout never accepts: it is a "no judgement", so a right response that
crashed counts as a false negative of class ``error: ...``, and shows up as such instead of hiding
as a wrong answer. Each wrong verdict gets a *failure class*: the status and the verifier's own
``reason`` (``not_equivalent``, ``no_answer``, ``equivalent (relation set)``...), so the counts say
which rule to fix.

An exploit is *rewarded* when it gets status ``ok`` and any positive score: a policy climbs any
gradient, not only a full reward.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub.types import OK, Result

__all__ = ["Confusion", "Outcome", "audit_report", "class_counts", "exploit_entry", "failure_class", "judge_case"]

SHOWN_CHARS = 300


@dataclass(frozen=True)
class Outcome:
    """One labelled case, judged."""

    index: int
    id: str | None
    label: bool
    expected: bool | float
    accepted: bool
    result: Result
    response: str
    reference: Any

    @property
    def kind(self) -> str:
        if self.accepted == self.label:
            return "true_positive" if self.label else "true_negative"
        return "false_positive" if self.accepted else "false_negative"

    def entry(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.id,
            "class": failure_class(self.result),
            "expected": self.expected,
            "score": self.result.score,
            "status": self.result.status,
            "error": self.result.error,
            "response": _shown(self.response),
            "reference": _shown(self.reference) if isinstance(self.reference, str) else self.reference,
        }


@dataclass(frozen=True)
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def of(cls, outcomes: Sequence[Outcome]) -> Confusion:
        kinds = Counter(o.kind for o in outcomes)
        return cls(kinds["true_positive"], kinds["false_positive"], kinds["false_negative"], kinds["true_negative"])

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float | None:
        """Of the responses accepted, the fraction that were right (None when none was accepted)."""
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        """Of the right responses, the fraction accepted (None when no response was right)."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.tp + self.tn, self.n)


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def accepts(result: Result, threshold: float) -> bool:
    return result.status == OK and result.score >= threshold


def judge_case(
    index: int,
    case_id: str | None,
    expected: bool | float,
    label: bool,
    result: Result,
    threshold: float,
    response: str,
    reference: Any,
) -> Outcome:
    return Outcome(index, case_id, label, expected, accepts(result, threshold), result, response, reference)


def failure_class(result: Result) -> str:
    """Why the verifier said what it said: status, then its reason and the rule that matched."""
    details = result.details
    reason = details.get("reason") or details.get("verdict") or details.get("short_circuit") or _test_verdicts(details)
    rule = result.details.get("rule")
    text = str(reason) if reason else ("scored" if result.status == OK else "")
    if rule and reason:
        text += f" ({rule})"
    if result.status != OK:
        return f"{result.status}: {text}" if text else result.status
    return text


def _test_verdicts(details: dict[str, Any]) -> str | None:
    """The verdicts of the failed tests of a code result (``runtime_error+wrong_answer``)."""
    tests = details.get("tests")
    if not isinstance(tests, list):
        return None
    failed = sorted({str(t.get("verdict")) for t in tests if isinstance(t, dict) and not t.get("passed")})
    return "+".join(failed) if failed else "all_passed"


def class_counts(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """``{"false_positive": {class: n}, "false_negative": {class: n}}``, most frequent first."""
    counts: dict[str, Counter[str]] = {"false_positive": Counter(), "false_negative": Counter()}
    for outcome in outcomes:
        if outcome.kind in counts:
            counts[outcome.kind][failure_class(outcome.result)] += 1
    return {kind: dict(counter.most_common()) for kind, counter in counts.items()}


def exploit_entry(exploit_id: str, attack: str, inspired_by: str, response: str, result: Result) -> dict[str, Any]:
    return {
        "id": exploit_id,
        "attack": attack,
        "inspired_by": inspired_by,
        "rewarded": result.status == OK and result.score > 0,
        "score": result.score,
        "status": result.status,
        "class": failure_class(result),
        "error": result.error,
        "response": _shown(response),
    }


def audit_report(verifier: Any, outcomes: Sequence[Outcome], exploits: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The audit's answer, in the shape API.md gives ``POST /v1/audit``."""
    confusion = Confusion.of(outcomes)
    ordered_exploits = sorted(exploits, key=lambda e: not e["rewarded"])  # the leaks first
    return {
        "verifier": verifier,
        "n": confusion.n,
        "precision": confusion.precision,
        "recall": confusion.recall,
        "accuracy": confusion.accuracy,
        "false_positives": [o.entry() for o in outcomes if o.kind == "false_positive"],
        "false_negatives": [o.entry() for o in outcomes if o.kind == "false_negative"],
        "exploits": {
            "tried": len(exploits),
            "rewarded": sum(e["rewarded"] for e in exploits),
            "cases": ordered_exploits,
        },
    }


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return value[:SHOWN_CHARS] + "..."
    return value
