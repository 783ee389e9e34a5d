"""``rewardhub probes [VERIFIER ...]``: the released probe suites against the rule verifiers, through the service.

Without ``--url`` a service is started in this process's threads (:class:`rewardhub.server.EmbeddedServer`,
loopback, a free port) with the given settings and plugins, and the suites reach it over HTTP like any
trainer; with ``--url`` they go to a running server. Either way every reply a suite builds is one
``POST /v1/score``: nothing here imports a verifier.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from rewardhub.audit.probe_report import markdown_report, text_report
from rewardhub.audit.probe_suites import OPTIONAL_SUITES, SUITES, probe_verifier, suite_versions
from rewardhub.audit.probe_tasks import NOT_PROBED, PROBED, VerifierProbes
from rewardhub.errors import InvalidRequest

__all__ = ["add_arguments", "probes_command"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "verifiers",
        nargs="*",
        metavar="VERIFIER",
        help=f"rule verifiers to probe (default: every one the suites can drive: {', '.join(PROBED)})",
    )
    parser.add_argument("--url", help="probe a running rewardhub server instead of one started here")
    parser.add_argument("--api-key", help="the server's API key (with --url)")
    parser.add_argument(
        "--suites",
        default=",".join(SUITES),
        help=f"comma-separated, of {', '.join(SUITES + OPTIONAL_SUITES)} (default: {', '.join(SUITES)})",
    )
    parser.add_argument("--tasks", type=int, help="tasks per verifier (default: all of each verifier's)")
    parser.add_argument(
        "--as",
        dest="stand_in",
        action="append",
        default=[],
        metavar="NAME=VERIFIER",
        help="probe the verifier NAME (a plugin) with VERIFIER's tasks, e.g. shout=exact",
    )
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--markdown", type=Path, metavar="OUT.md", help="also write the report as Markdown")
    parser.add_argument("--plugin", action="append", default=None, metavar="FILE.py", help="register a plugin file")
    parser.add_argument("--settings", help="YAML settings file, as `rewardhub serve --config` reads")
    parser.add_argument("--workers", type=int, default=1, help="CPU worker processes of the service started here")
    parser.add_argument("--fail-on-paid", action="store_true", help="exit 1 when a probe not paid by design was paid")


def probes_command(args: argparse.Namespace) -> int:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per reply otherwise: thousands
    chosen = chosen_probes(args.verifiers, args.stand_in)
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    unknown = [s for s in suites if s not in SUITES + OPTIONAL_SUITES]
    if unknown:
        raise InvalidRequest(f"no probe suite {', '.join(unknown)}; there are {', '.join(SUITES + OPTIONAL_SUITES)}")
    versions = suite_versions(suites)  # before a service starts: says what to install when a suite is missing
    reports = run_probes(chosen, suites, args.tasks, url=args.url, api_key=args.api_key, service=_service_options(args))
    run = {
        "command": " ".join(["rewardhub", *(a for a in sys.argv[1:])])
        if sys.argv[1:2] == ["probes"]
        else "rewardhub probes",
        "suites": versions,
        "verifiers": reports,
        "not_probed": {} if args.verifiers or args.stand_in else NOT_PROBED,
    }
    if args.markdown:
        args.markdown.write_text(markdown_report(run))
    print(json.dumps(_without_rows(run), indent=2, default=str) if args.json else text_report(run))
    paid = any(report["ceiling_not_by_design"] > 0 for report in reports)
    return 1 if args.fail_on_paid and paid else 0


def chosen_probes(names: list[str], stand_ins: list[str]) -> list[VerifierProbes]:
    """The tasks of each named verifier (every one when neither names nor stand-ins are given);
    ``NAME=VERIFIER`` probes NAME with VERIFIER's tasks."""
    chosen = [_probes_for(name) for name in names] if names or stand_ins else list(PROBED.values())
    for pair in stand_ins:
        name, _, like = pair.partition("=")
        base = _probes_for(like.strip())
        chosen.append(VerifierProbes(name.strip(), base.render, base.tasks, {}, base.labels, {}))
    return chosen


def run_probes(
    chosen: list[VerifierProbes],
    suites: list[str],
    tasks: int | None,
    *,
    url: str | None = None,
    api_key: str | None = None,
    service: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Each verifier's report, from a running server at ``url`` or a service started here."""
    from rewardhub.client import RewardClient

    if url:
        with RewardClient(url, api_key=api_key, max_retries=2) as client:
            return [probe_verifier(probes, client, suites, tasks) for probes in chosen]
    from rewardhub.server import EmbeddedServer

    with EmbeddedServer(**(service or {})) as started, RewardClient(started, max_retries=2) as client:
        return [probe_verifier(probes, client, suites, tasks) for probes in chosen]


def _service_options(args: argparse.Namespace) -> dict[str, Any]:
    from rewardhub.settings import Settings

    overrides: dict[str, Any] = {"workers": args.workers}
    if args.plugin:
        overrides["plugins"] = args.plugin
    return {"settings": Settings.load(args.settings, **overrides)}


def _probes_for(name: str) -> VerifierProbes:
    if name in PROBED:
        return PROBED[name]
    if name in NOT_PROBED:
        raise InvalidRequest(f"the probe suites do not drive {name}: {NOT_PROBED[name]}")
    raise InvalidRequest(
        f"no probe tasks for {name!r}; there are tasks for {', '.join(PROBED)} (or use --as {name}=VERIFIER)"
    )


def _without_rows(run: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer without falsepass's per-reply rows (thousands of lines; the Markdown keeps the paid ones)."""
    verifiers = []
    for report in run["verifiers"]:
        falsepass = {k: v for k, v in report.get("falsepass", {}).items() if k != "rows"}
        verifiers.append({**report, **({"falsepass": falsepass} if "falsepass" in report else {})})
    return {**run, "verifiers": verifiers}
