"""Running an audit through a scoring path: the service's scorer in process, or a running server.

The audit never scores on its own: it hands the cases and the exploits to the same path that
``POST /v1/score`` uses (:class:`~rewardhub.scoring.Scorer` over an executor, or
:class:`~rewardhub.client.AsyncRewardClient` against a URL), so its numbers are the service's numbers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from rewardhub.audit.cases import AuditCase, Exploit
from rewardhub.audit.confusion import Confusion, audit_report, exploit_entry, judge_case
from rewardhub.client import AsyncRewardClient
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierSpec

__all__ = ["Audit", "ScoreFn", "client_score_fn", "in_process", "run_audit", "scorer_score_fn", "spec_json"]

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


@asynccontextmanager
async def in_process(settings: Settings, registry: Registry) -> AsyncIterator[Scorer]:
    """The scorer ``rewardhub serve`` runs, over this process's executor (local pools, the sandbox
    for code), started for the block and closed after it."""
    from rewardhub.execution.local import LocalExecutor

    executor = LocalExecutor(settings, registry)
    await executor.start()
    try:
        yield Scorer(registry, executor, settings)
    finally:
        await executor.close()


def scorer_score_fn(scorer: Scorer, cache: bool | None = None) -> ScoreFn:
    """``cache``: False for work that must judge afresh (a repeat, a re-verification, a mutant)."""

    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        return await scorer.score(samples, nodes=scorer.plan(samples, spec), cache=cache)

    return score


def client_score_fn(client: AsyncRewardClient, chunk: int = CLIENT_CHUNK, cache: bool | None = None) -> ScoreFn:
    """Through ``POST /v1/score`` of a running server, in chunks under its per-request limit."""

    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        results: list[Result] = []
        for start in range(0, len(samples), chunk):
            results += await client.score(samples[start : start + chunk], spec, cache=cache)
        return results

    return score


def spec_json(spec: VerifierSpec) -> Any:
    return spec.model_dump(mode="json") if hasattr(spec, "model_dump") else spec
