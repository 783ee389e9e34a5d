"""Run the released probe suites against one verifier through the service, and summarise what they found.

The suites are pinned releases (the ``audit`` extra): falsepass, gradecheck's completion attacks and
gameability's null probes (its ``probe`` part, "RL environments whose reward pays for no work").
Their probes, their expectations and their headline numbers are theirs; this module only feeds
them the tasks of :mod:`.probe_tasks` and the service's reward function of :mod:`.probe_adapters`,
and lists every probe that was paid, marking those the verifier pays by design.

abstain-bench runs only when asked (``--suites abstain-bench``): its corpus is hash chains,
dependency graphs and certificates handed to a shell command (:mod:`.probe_subject`, one interpreter
per case), and by its own rule it refuses to score (ABSTAIN) a subject that accepts none of those
families, which is what a rule verifier here does; the report keeps its verdict and which of its
uncheckable inputs were passed anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from rewardhub.audit.probe_tasks import VerifierProbes
from rewardhub.client import RewardClient
from rewardhub.errors import RewardhubError

__all__ = ["SUITES", "probe_verifier", "suite_versions"]

SUITES = ("falsepass", "gradecheck", "gameability")
OPTIONAL_SUITES = ("abstain-bench",)
SUBJECT = Path(__file__).with_name("probe_subject.py")
BELOW = "reference"  # falsepass's below_reference and at_most_reference expectations
DISTRIBUTIONS = {
    "falsepass": "falsepass",
    "gradecheck": "gradecheck",
    "gameability": "gameability",
    "abstain-bench": "abstain-bench",
}


def suite_versions(suites: Sequence[str] = SUITES) -> dict[str, str]:
    """The installed release of each suite (the report names them: a probe set changes between releases)."""
    try:
        return {suite: metadata.version(DISTRIBUTIONS[suite]) for suite in suites}
    except metadata.PackageNotFoundError as exc:
        raise RewardhubError(
            f"the probe suites are not installed ({exc.name}): pip install 'rewardhub[audit]'"
        ) from None


def probe_verifier(
    probes: VerifierProbes,
    client: RewardClient,
    suites: Sequence[str] = SUITES,
    tasks: int | None = None,
    few: int = 3,
) -> dict[str, Any]:
    """Every chosen suite against one verifier; the service's own count of requests and statuses.

    ``few``: the tasks falsepass plays its slower probes on (P10 malformed replies, P11 the same reply
    ten times), falsepass's own default."""
    if tasks is not None:
        probes = VerifierProbes(
            probes.verifier, probes.render, probes.tasks[:tasks], probes.config, probes.labels, probes.by_design
        )
    from rewardhub.audit.probe_adapters import CountingClient, service_reward  # the suites: the audit extra

    counting = CountingClient(client)
    reward = service_reward(probes, counting)
    report: dict[str, Any] = {"verifier": probes.verifier, "config": probes.config, "tasks": len(probes.tasks)}
    with contextlib.redirect_stderr(io.StringIO()):  # the suites' progress lines
        if "falsepass" in suites:
            report["falsepass"] = run_falsepass(probes, reward, few)
        if "gradecheck" in suites:
            report["gradecheck"] = run_gradecheck(probes, reward)
        if "gameability" in suites:
            report["gameability"] = run_gameability(probes, reward)
        if "abstain-bench" in suites:
            report["abstain-bench"] = run_abstain_bench(probes, client)
    report["service"] = {
        "requests": counting.requests,
        "unsent": counting.unsent,
        "statuses": dict(counting.statuses),
        "errors": counting.errors,
    }
    report["paid"] = paid_probes(report, probes)
    report["ceiling_not_by_design"] = max((p["max_score"] for p in report["paid"] if not p["by_design"]), default=0.0)
    return report


def run_falsepass(probes: VerifierProbes, reward: Any, few: int = 3) -> dict[str, Any]:
    """falsepass's per-task and few-task probes, its same-as-good marking and its headline numbers."""
    from falsepass import probes as fp
    from falsepass import report as fp_report
    from falsepass.runner import score_examples

    from rewardhub.audit.probe_adapters import FalsepassAdapter

    adapter = FalsepassAdapter(probes, reward)
    fp.STORE.clear()
    scorer, examples = adapter.load(len(probes.tasks), seed=0)
    loop = asyncio.new_event_loop()
    try:
        results = score_examples(adapter, scorer, loop, fp.PER_EXAMPLE + adapter.per_example_probes, examples)
        results += score_examples(adapter, scorer, loop, fp.FEW_EXAMPLES + adapter.extra_probes, examples[:few])
    finally:
        loop.close()
    fp.mark_same_as_good(results)
    rows = [r.to_dict() for r in results]
    head = fp_report.headline(rows)
    return {**head, "rows": rows}


def run_gradecheck(probes: VerifierProbes, reward: Any) -> dict[str, Any]:
    """gradecheck's completion attacks (empty, prompt echo, garbage, flattery, format-only, answer leak)."""
    from gradecheck.completion_attacks import run_all
    from gradecheck.verifiers_env import VerifiersEnv

    from rewardhub.audit.probe_adapters import ServiceEnvironment

    environment = ServiceEnvironment(probes, reward)
    env = VerifiersEnv(environment, sample=len(probes.tasks))
    findings = run_all(env)
    return {
        "pass_threshold": env.pass_threshold,
        "findings": [{"attack": f.attack, "verdict": f.verdict, "summary": f.summary} for f in findings],
        "unscored": environment.unscored,
    }


def run_gameability(probes: VerifierProbes, reward: Any) -> dict[str, Any]:
    """gameability's null probes: what empty, refusal, echo, wrong-in-format and filler replies earn on average."""
    from gameability.probe import probe_env

    from rewardhub.audit.probe_adapters import ServiceEnvironment

    environment = ServiceEnvironment(probes, reward)
    result = probe_env(environment, n_items=len(probes.tasks))
    keep = (
        "status",
        "gt_mean",
        "gt_best_format",
        "probes",
        "gameable",
        "gameable_probes",
        "answer_prior_share",
        "error",
    )
    return {**{k: result.get(k) for k in keep}, "unscored": environment.unscored}


def run_abstain_bench(probes: VerifierProbes, client: RewardClient) -> dict[str, Any]:
    """abstain-bench's corpus, each case's file sent as the response to the verifier's first task."""
    from abstain_bench.score import CLAIMED_PASS, score

    spec = {"name": probes.verifier, "config": probes.config}
    subject = [
        sys.executable,
        "-I",
        str(SUBJECT),
        client.base_url,
        json.dumps(spec),
        json.dumps(probes.tasks[0].reference),
    ]
    key = client.headers.get("authorization")
    with _environment("REWARDHUB_PROBE_AUTHORIZATION", key):
        report = score(f"rewardhub:{probes.verifier}", " ".join(map(shlex.quote, subject)) + " {input}", jobs=2)
    return {
        "verdict": report.verdict,
        "reason": report.reason,
        "control_failures": report.control_failures,
        "families": report.families,
        "unearned_pass_rate": report.rate,
        "claimed": [o.case.name for o in report.outcomes if o.outcome == CLAIMED_PASS],
        "subject_runs": len(report.outcomes),
    }


@contextlib.contextmanager
def _environment(name: str, value: str | None) -> Iterator[None]:
    """``name`` set to ``value`` for the subject processes started meanwhile (none when ``value`` is None)."""
    previous = os.environ.pop(name, None)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)
        if previous is not None:
            os.environ[name] = previous


def paid_probes(report: dict[str, Any], probes: VerifierProbes) -> list[dict[str, Any]]:
    """Every probe a suite counted as paid: a known-bad reply rewarded, an attack that fooled, a null probe
    earning half the correct answers' reward. Each with its largest score and the by-design reason, if any."""
    paid: dict[str, dict[str, Any]] = {}
    for row in report.get("falsepass", {}).get("rows", []):
        if row["score"] is None or row.get("same_as_good"):
            continue
        # a known-bad reply paid anything, or a changed value paid what the reference earns (P17)
        if not (row["expected"] == "zero" and row["score"] > 0) and not (
            BELOW in row["expected"] and not row["passed"]
        ):
            continue
        key = f"falsepass {row['probe']} {row['name']}/{row['variant']}"
        entry = paid.setdefault(key, _entry("falsepass", key, probes.design_reason(row["probe"]), row["completion"]))
        entry["runs"] += 1
        entry["max_score"] = max(entry["max_score"], row["score"])
    for finding in report.get("gradecheck", {}).get("findings", []):
        if finding["verdict"] == "fooled":
            key = f"gradecheck {finding['attack']}"
            paid[key] = {
                **_entry("gradecheck", key, probes.design_reason(finding["attack"]), finding["summary"]),
                "runs": 1,
                "max_score": 1.0,
            }
    abstain = report.get("abstain-bench", {})
    if abstain.get("verdict") == "SCORED":
        for case in abstain["claimed"]:
            key = f"abstain-bench {case}"
            paid[key] = {**_entry("abstain-bench", key, probes.design_reason(case), ""), "runs": 1, "max_score": 1.0}
    games = report.get("gameability", {})
    for name in games.get("gameable_probes") or []:
        key = f"gameability {name}"
        paid[key] = {
            **_entry("gameability", key, probes.design_reason(name), ""),
            "runs": 1,
            "max_score": games["probes"][name],
        }
    return sorted(paid.values(), key=lambda p: (-p["max_score"], p["probe"]))


def _entry(suite: str, key: str, reason: str | None, example: str) -> dict[str, Any]:
    return {"suite": suite, "probe": key, "runs": 0, "max_score": 0.0, "by_design": reason, "example": example[:200]}
