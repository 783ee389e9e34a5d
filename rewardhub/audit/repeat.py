"""``rewardhub audit --repeat N``: how much a verifier's verdicts move when nothing else does.

A rule verifier is a function of its input; a model judge is a function of its input, its
weights, its precision and its decoding, and a sampled judge is a random variable besides. This
scores the same cases ``N`` times with the reward cache off (a cached verdict would repeat
itself and prove nothing) and reports each case's spread, so a user sees whether a judge is
repeatable before trusting it as a reward: with greedy decoding on one backend the spread must
be 0; a sampled judge reports its spread and how many repeats its mean needs for a stated
precision.

The statistics are pure functions of the score table; the scoring goes through the service's
path (:mod:`rewardhub.audit.run`), never around it.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from rewardhub.audit.cases import AuditCase
from rewardhub.types import OK, Result, Sample, VerifierSpec

__all__ = [
    "Z_95",
    "RepeatScoreFn",
    "judges_of",
    "repeat_report",
    "repeat_text",
    "repeats_for_precision",
    "run_repeats",
]

Z_95 = 1.959964
"""The two-sided 95% normal quantile: a mean of ``n`` draws with spread ``sd`` is within
``Z_95 * sd / sqrt(n)`` of the judge's expected score 95% of the time."""

RepeatScoreFn = Callable[[list[Sample], VerifierSpec], Awaitable[list[Result]]]
"""Scores samples under one spec with the reward cache off."""


async def run_repeats(
    score: RepeatScoreFn, spec: VerifierSpec, cases: Sequence[AuditCase], repeats: int
) -> list[list[Result]]:
    """The cases scored ``repeats`` times, one batch per round: ``table[round][case]``."""
    if repeats < 2:
        raise ValueError("--repeat needs at least 2 rounds to measure a spread")
    samples = [case.sample() for case in cases]
    return [await score(samples, spec) for _ in range(repeats)]


def repeats_for_precision(sd: float, precision: float) -> int:
    """Rounds whose mean is within ``precision`` of the expected score at 95%: ``(z*sd/precision)^2``.
    One round where the verdicts never move."""
    if precision <= 0:
        raise ValueError("precision must be positive")
    return max(1, math.ceil((Z_95 * sd / precision) ** 2))


def judges_of(table: Sequence[Sequence[Result]]) -> list[dict[str, Any]]:
    """Each distinct judge that gave the rounds' verdicts: its verdict key and ``details.model``
    (name, weights, dtype, backend, decoding). A spread means nothing without the decoding that
    made it (greedy must be 0, a temperature of 1 may not), and two judges in one table would
    be a spread between judges, not a judge's own."""
    seen: dict[str, dict[str, Any]] = {}
    for result in (r for round_results in table for r in round_results):
        judge = {k: result.details[k] for k in ("verdict_key", "model") if k in result.details}
        if judge:
            seen.setdefault(json.dumps(judge, sort_keys=True, default=str), judge)
    return list(seen.values())


def repeat_report(
    ids: Sequence[str], table: Sequence[Sequence[Result]], threshold: float = 1.0, precision: float = 0.05
) -> dict[str, Any]:
    """Per case: its scores over the rounds, their range and standard deviation, whether the
    accept/reject verdict flipped, and any round that was not ``ok``. Overall: the largest and mean
    spread, the cases that moved, and the rounds a mean needs for ``precision`` (from the
    largest standard deviation: the case that moves most decides)."""
    cases = []
    for index, case_id in enumerate(ids):
        column = [round_results[index] for round_results in table]
        scores = [r.score for r in column if r.status == OK]
        errors = [r.error or r.status for r in column if r.status != OK]
        spread = max(scores) - min(scores) if scores else 0.0
        sd = statistics.pstdev(scores) if len(scores) > 1 else 0.0
        accepted = {s >= threshold for s in scores}
        cases.append(
            {
                "id": case_id,
                "scores": scores,
                "spread": spread,
                "sd": sd,
                "verdict_flips": len(accepted) > 1,
                "errors": errors,
            }
        )
    sds = [c["sd"] for c in cases] or [0.0]
    return {
        "rounds": len(table),
        "n": len(cases),
        "max_spread": max((c["spread"] for c in cases), default=0.0),
        "mean_sd": statistics.fmean(sds),
        "max_sd": max(sds),
        "cases_that_moved": sum(1 for c in cases if c["spread"] > 0 or (c["errors"] and c["scores"])),
        "verdict_flips": sum(1 for c in cases if c["verdict_flips"]),
        "precision": precision,
        "rounds_for_precision": repeats_for_precision(max(sds), precision),
        "judges": judges_of(table),
        "cases": cases,
    }


def repeat_text(report: dict[str, Any]) -> str:
    lines = [
        f"repeatability over {report['rounds']} rounds of {report['n']} cases (reward cache off):",
        f"  largest spread {report['max_spread']:.4f}, mean sd {report['mean_sd']:.4f}, "
        f"{report['cases_that_moved']} cases moved, {report['verdict_flips']} flipped accept/reject",
        f"  a mean within ±{report['precision']} at 95% needs {report['rounds_for_precision']} rounds",
    ]
    for judge in report.get("judges", []):
        model, key = judge.get("model", {}), judge.get("verdict_key", {})
        lines.append(
            f"  judge {model.get('name', key.get('verifier'))} on {model.get('backend', '?')} "
            f"({model.get('dtype', key.get('precision', '?'))}), decoding {json.dumps(model.get('decoding'))}, "
            f"verdict key {key.get('config_hash', '?')}"
        )
    for case in report["cases"]:
        if case["spread"] > 0 or case["errors"]:
            shown = ", ".join(f"{s:.3f}" for s in case["scores"])
            extra = f"; errors: {case['errors'][:2]}" if case["errors"] else ""
            lines.append(f"  {case['id']}: spread {case['spread']:.4f} [{shown}]{extra}")
    return "\n".join(lines)
