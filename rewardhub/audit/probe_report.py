"""The probe suites' findings, per verifier: a terminal summary and the Markdown report of ``bench/results``."""

from __future__ import annotations

from typing import Any

__all__ = ["headline_row", "markdown_report", "text_report"]


def headline_row(report: dict[str, Any]) -> dict[str, Any]:
    """The numbers a reader compares across verifiers: falsepass's three, the suites' paid probes, the service's errors."""
    falsepass = report.get("falsepass", {})
    paid = report["paid"]
    return {
        "verifier": report["verifier"],
        "false_pass_ceiling": falsepass.get("false_pass_ceiling"),
        "ceiling_not_by_design": report["ceiling_not_by_design"],
        "lazy_policy_reward": falsepass.get("lazy_policy_reward"),
        "false_fail_rate": falsepass.get("false_fail_rate"),
        "paid": sum(not p["by_design"] for p in paid),
        "paid_by_design": sum(bool(p["by_design"]) for p in paid),
        "gradecheck_fooled": sum(f["verdict"] == "fooled" for f in report.get("gradecheck", {}).get("findings", [])),
        "gameability": report.get("gameability", {}).get("status"),
        "abstain_bench": _abstain(report.get("abstain-bench")),
        "requests": report["service"]["requests"],
        "not_ok": sum(n for status, n in report["service"]["statuses"].items() if status != "ok"),
    }


def _abstain(result: dict[str, Any] | None) -> str | None:
    """abstain-bench's verdict, and how many of its inputs the verifier passed (uncheckable ones and controls)."""
    if result is None:
        return None
    return f"{result['verdict']} ({len(result['claimed'])}/{result['subject_runs']} passed)"


def _shown(text: str) -> str:
    """A reply on one table line: control characters (a probe's NUL byte, newlines) escaped, pipes too."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text.replace("|", "\\|").replace("`", "'")


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def text_report(run: dict[str, Any]) -> str:
    versions = ", ".join(f"{suite} {version}" for suite, version in run["suites"].items())
    lines = [f"probe suites: {versions}", ""]
    header = ("verifier", "ceiling", "not by design", "lazy", "false fail", "paid", "by design", "not ok", "requests")
    lines.append("  ".join(f"{h:>13}" for h in header))
    for report in run["verifiers"]:
        row = headline_row(report)
        values = (
            row["verifier"],
            row["false_pass_ceiling"],
            row["ceiling_not_by_design"],
            row["lazy_policy_reward"],
            row["false_fail_rate"],
            row["paid"],
            row["paid_by_design"],
            row["not_ok"],
            row["requests"],
        )
        lines.append("  ".join(f"{_number(v):>13}" for v in values))
    for report in run["verifiers"]:
        flaws = [p for p in report["paid"] if not p["by_design"]]
        if flaws:
            lines.append(f"\n{report['verifier']}: paid, not by design")
            lines += [f"  {p['max_score']:.3g}  {p['probe']}  ({p['runs']} runs)  e.g. {p['example']!r}" for p in flaws]
    if run.get("not_probed"):
        lines.append("\nnot probed:")
        lines += [f"  {name}: {why}" for name, why in run["not_probed"].items()]
    return "\n".join(lines)


def markdown_report(run: dict[str, Any]) -> str:
    versions = ", ".join(f"{suite} {version}" for suite, version in run["suites"].items())
    lines = [
        "# Released probe suites against the rule verifiers, through the service",
        "",
        f"Reproduce: `{run.get('command', 'rewardhub probes')}`. Every reply a suite built went to the service's "
        "`POST /v1/score` through the TRL reward function (`rewardhub.integrations.trl.reward_func`); "
        "`not ok` counts replies the service could not judge (status error: no reward, never paid). "
        "A probe paid *by design* is named with its reason in `rewardhub/audit/probe_tasks.py`.",
        "",
        "| verifier | false-pass ceiling | ceiling, not by design | lazy-policy reward | false-fail rate | "
        "probes paid (not by design / by design) | gradecheck fooled | gameability | abstain-bench | requests | not ok |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for report in run["verifiers"]:
        row = headline_row(report)
        lines.append(
            f"| {row['verifier']} | {_number(row['false_pass_ceiling'])} | {_number(row['ceiling_not_by_design'])} | "
            f"{_number(row['lazy_policy_reward'])} | {_number(row['false_fail_rate'])} | "
            f"{row['paid']} / {row['paid_by_design']} | {row['gradecheck_fooled']} | {row['gameability'] or '-'} | "
            f"{row['abstain_bench'] or '-'} | "
            f"{row['requests']} | {row['not_ok']} |"
        )
    lines += ["", f"Suites: {versions}.", ""]
    for report in run["verifiers"]:
        lines += _verifier_section(report)
    if run.get("not_probed"):
        lines += ["## Not probed", ""]
        lines += [f"- `{name}`: {why}" for name, why in run["not_probed"].items()]
        lines.append("")
    return "\n".join(lines)


def _verifier_section(report: dict[str, Any]) -> list[str]:
    falsepass = report.get("falsepass", {})
    lines = [f"## {report['verifier']}", ""]
    if falsepass:
        lines.append(
            f"falsepass: ceiling {_number(falsepass.get('false_pass_ceiling'))} via {falsepass.get('false_pass_via')}, "
            f"lazy-policy {_number(falsepass.get('lazy_policy_reward'))} via {falsepass.get('lazy_policy_via')}, "
            f"false-fail {_number(falsepass.get('false_fail_rate'))} of {falsepass.get('known_good')} known-good, "
            f"{falsepass.get('known_bad')} known-bad, {falsepass.get('scoring_errors')} unscored."
        )
    abstain = report.get("abstain-bench")
    if abstain:
        lines.append(
            f"abstain-bench: {abstain['verdict']}: {'; '.join(abstain['control_failures']) or abstain['reason']}"
        )
        lines.append("")
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(report["service"]["statuses"].items()))
    lines += [f"Service: {report['service']['requests']} requests, results {statuses}.", ""]
    if report["paid"]:
        lines += ["| probe | runs | max score | by design | example |", "|---|---|---|---|---|"]
        for p in report["paid"]:
            example = _shown(p["example"])[:120]
            lines.append(
                f"| {p['probe']} | {p['runs']} | {p['max_score']:.3g} | {p['by_design'] or 'no'} | `{example}` |"
            )
        lines.append("")
    refused = [
        r for r in falsepass.get("rows", []) if r["expected"] == "full" and not r["passed"] and r["score"] is not None
    ]
    if refused:
        lines.append(
            "Known-good replies refused (false fails): "
            + "; ".join(f"{r['probe']} {r['variant']} ({_number(r['score'])})" for r in refused[:8])
            + "."
        )
        lines.append("")
    return lines
