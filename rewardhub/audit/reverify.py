"""Re-verification: stored samples scored again, and what changed, counted by flip and failure class.

A verdict *passes* when its status is ``ok`` and its score reaches the threshold. Between the old
verdict (stored, or scored by ``against``) and the new one, a sample either keeps its verdict or
flips one of four ways: ``0->1`` (now passes), ``1->0`` (now fails), ``ok->error`` (could be
judged, now cannot: a timeout or an error) and ``error->ok`` (the reverse). Each flip has a
failure class (:func:`~rewardhub.audit.confusion.failure_class`) taken from the side that fails:
the new verdict's for ``1->0`` and ``ok->error`` (why it fails now), the old one's for ``0->1``
and ``error->ok`` (why it failed then). So "the fix turned 40 ``not_equivalent`` into passes and
broke 3 ``no_answer``" is one line of the report.

A flip between verdicts with the same verdict key (same verifier, version and config) is counted
apart (``same_key_flips``): the verifier is not deterministic, or what it depends on (a judge
model, a sandbox image) changed without its version.

The arithmetic is pure (:func:`verdict_diff`); :func:`run_reverify` scores through a
:data:`~rewardhub.audit.run.ScoreFn`, the service's own path in process or over HTTP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rewardhub.audit.confusion import SHOWN_CHARS, failure_class
from rewardhub.audit.run import ScoreFn, spec_json
from rewardhub.audit.stored import Stored
from rewardhub.errors import InvalidRequest
from rewardhub.types import OK, Result, VerifierSpec

__all__ = ["FLIPS", "check_old_side", "flip_of", "run_reverify", "verdict_diff"]

FLIPS = ("0->1", "1->0", "ok->error", "error->ok")
"""The ways a verdict can change, in the order the report lists them."""


def _passes(result: Result, threshold: float) -> bool:
    return result.status == OK and result.score >= threshold


def flip_of(old: Result, new: Result, threshold: float) -> str | None:
    """How the verdict changed, or None when it did not (a score may move and still not flip)."""
    if old.status == OK and new.status != OK:
        return "ok->error"
    if old.status != OK and new.status == OK:
        return "error->ok"
    if old.status != OK:
        return None  # no judgement then, none now
    was, now = _passes(old, threshold), _passes(new, threshold)
    if was == now:
        return None
    return "0->1" if now else "1->0"


def _class_of(flip: str, old: Result, new: Result) -> str:
    return failure_class(new if flip in ("1->0", "ok->error") else old)


def _side(result: Result) -> dict[str, Any]:
    return {
        "score": result.score,
        "status": result.status,
        "error": result.error,
        "class": failure_class(result),
        "verdict_key": result.details.get("verdict_key"),
    }


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return value[:SHOWN_CHARS] + "..."
    return value


def verdict_diff(
    verifier: Any,
    against: Any,
    stored: Sequence[Stored],
    old: Sequence[Result],
    new: Sequence[Result],
    threshold: float = 1.0,
) -> dict[str, Any]:
    """The report (``POST /v1/reverify``'s answer): flips, flips per class, the changed samples, flips first."""
    flips: Counter[str] = Counter()
    by_class: dict[str, Counter[str]] = {}
    changed: list[dict[str, Any]] = []
    score_moved = same_key = 0
    for index, (item, before, after) in enumerate(zip(stored, old, new, strict=True)):
        flip = flip_of(before, after, threshold)
        if flip is None:
            if before.status == OK and after.status == OK and before.score != after.score:
                score_moved += 1
                changed.append(_entry(index, item, before, after, None))
            continue
        flips[flip] += 1
        by_class.setdefault(_class_of(flip, before, after), Counter())[flip] += 1
        key_before, key_after = before.details.get("verdict_key"), after.details.get("verdict_key")
        if key_before is not None and key_before == key_after:
            same_key += 1
        changed.append(_entry(index, item, before, after, flip))
    order = {flip: n for n, flip in enumerate(FLIPS)}
    changed.sort(key=lambda e: (e["flip"] is None, order.get(e["flip"], 0), e["index"]))
    ranked = sorted(by_class.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    return {
        "verifier": verifier,
        "against": against,
        "threshold": threshold,
        "n": len(stored),
        "flips": {flip: flips[flip] for flip in FLIPS},
        "flipped": sum(flips.values()),
        "score_changed": score_moved,
        "same_key_flips": same_key,
        "by_class": {name: {flip: counts[flip] for flip in FLIPS if counts[flip]} for name, counts in ranked},
        "verdict_keys": {"old": _key_counts(old), "new": _key_counts(new)},
        "changed": changed,
    }


def _entry(index: int, item: Stored, before: Result, after: Result, flip: str | None) -> dict[str, Any]:
    return {
        "index": index,
        "id": item.sample.id,
        "where": item.where,
        "flip": flip,
        "class": _class_of(flip, before, after) if flip else failure_class(after),
        "old": _side(before),
        "new": _side(after),
        "response": _shown(item.sample.response),
        "reference": _shown(item.sample.reference),
    }


def _key_counts(results: Sequence[Result]) -> list[dict[str, Any]]:
    """Which verdict keys gave these verdicts, most frequent first (a mixed run shows two)."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for result in results:
        key = result.details.get("verdict_key") or {}
        counts[(str(key.get("verifier", "?")), str(key.get("version", "?")), str(key.get("config_hash", "?")))] += 1
    return [{"verifier": v, "version": ver, "config_hash": h, "n": n} for (v, ver, h), n in counts.most_common()]


def check_old_side(stored: Sequence[Stored], against: VerifierSpec | None) -> None:
    """Refuse, before any scoring, samples that have no old verdict when nothing else gives one."""
    missing = [item.where for item in stored if item.old is None] if against is None else []
    if missing:
        raise InvalidRequest(
            f"{len(missing)} samples carry no stored verdict (first: {missing[0]}); name the old verifier with against",
            detail={"without_verdict": missing[:20]},
        )


async def run_reverify(
    score: ScoreFn,
    spec: VerifierSpec,
    stored: Sequence[Stored],
    against: VerifierSpec | None = None,
    threshold: float = 1.0,
) -> dict[str, Any]:
    """Score ``stored`` with ``spec`` (and with ``against`` for the old side, else their stored verdicts)."""
    samples = [item.sample for item in stored]
    check_old_side(stored, against)
    if against is None:
        old = [item.old for item in stored]
    else:
        old = await score(samples, against) if samples else []
    new = await score(samples, spec) if samples else []
    return verdict_diff(spec_json(spec), spec_json(against) if against else "stored", stored, old, new, threshold)  # type: ignore[arg-type]
