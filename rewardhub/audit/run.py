"""Running an audit through a scoring path: the service's scorer in process, or a running server.

The audit never scores on its own: it hands the cases and the exploits to the same path that
``POST /v1/score`` uses (:class:`~rewardhub.scoring.Scorer` over an executor, or
:class:`~rewardhub.client.AsyncRewardClient` against a URL), so its numbers are the service's numbers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub.audit.cases import AuditCase, Exploit
from rewardhub.audit.confusion import Confusion, audit_report, exploit_entry, judge_case
from rewardhub.client import AsyncRewardClient
from rewardhub.scoring import Scorer
from rewardhub.types import Result, Sample, VerifierSpec

__all__ = ["Audit", "ScoreFn", "client_score_fn", "run_audit", "scorer_score_fn", "spec_json"]

ScoreFn = Callable[[list[Sample], VerifierSpec], Awaitable[list[Result]]]
"""Scores samples under one spec, results in the samples' order."""

CLIENT_CHUNK = 256


@dataclass(frozen=True)
class Audit:
    """The report (the JSON answer) and the confusion counts behind it."""

    report: dict[str, Any]
    confusion: Confusion


async def run_audit(
    score: ScoreFn,
    spec: VerifierSpec,
    cases: Sequence[AuditCase],
    exploits: Sequence[Exploit],
    threshold: float = 1.0,
) -> Audit:
    """Score labelled cases and exploits in one batch, and report (see :func:`audit_report`)."""
    samples = [case.sample() for case in cases] + [exploit.sample() for exploit in exploits]
    results = await score(samples, spec) if samples else []
    case_results, exploit_results = results[: len(cases)], results[len(cases) :]
    outcomes = [
        judge_case(i, case.id, case.expected, case.label(threshold), result, threshold, sample.response, case.reference)
        for i, (case, sample, result) in enumerate(zip(cases, samples[: len(cases)], case_results, strict=True))
    ]
    entries = [
        exploit_entry(e.id, e.attack, e.inspired_by, e.response, result)
        for e, result in zip(exploits, exploit_results, strict=True)
    ]
    return Audit(audit_report(spec_json(spec), outcomes, entries), Confusion.of(outcomes))


def scorer_score_fn(scorer: Scorer) -> ScoreFn:
    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        return await scorer.score(samples, nodes=scorer.plan(samples, spec))

    return score


def client_score_fn(client: AsyncRewardClient, chunk: int = CLIENT_CHUNK) -> ScoreFn:
    """Through ``POST /v1/score`` of a running server, in chunks under its per-request limit."""

    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        results: list[Result] = []
        for start in range(0, len(samples), chunk):
            results += await client.score(samples[start : start + chunk], spec)
        return results

    return score


def spec_json(spec: VerifierSpec) -> Any:
    return spec.model_dump(mode="json") if hasattr(spec, "model_dump") else spec
