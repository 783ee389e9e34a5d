"""``rewardhub audit VERIFIER``: the command's work, kept out of ``cli.py``.

Without ``--url`` the cases and exploits are scored in this process through the same executor and
scorer that ``rewardhub serve`` runs (local process pools, the sandbox for code); with ``--url`` they
go to a running server's ``POST /v1/score``. Either way the verdicts are the service's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rewardhub.audit.cases import AuditCase, Exploit
from rewardhub.audit.corpus import CORPORA, exploits_for, load_corpus
from rewardhub.audit.report import plot_report, text_report
from rewardhub.audit.run import Audit, client_score_fn, in_process, run_audit, scorer_score_fn
from rewardhub.audit.stored import jsonl_objects
from rewardhub.errors import InvalidRequest, RewardhubError, UnknownVerifier
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import Result, VerifierSpec

__all__ = ["add_arguments", "audit_command", "read_cases", "verifier_spec"]

CASE_FIELDS = set(AuditCase.model_fields)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verifier", help="a verifier name (math) or a JSON spec ('{\"sum\": [...]}')")
    parser.add_argument("--config", help="the verifier's config as JSON, e.g. '{\"strict\": true}'")
    parser.add_argument("--cases", type=Path, help="labelled cases, JSONL: response or messages, reference, expected")
    parser.add_argument("--url", help="audit through a running rewardhub server instead of in process")
    parser.add_argument("--api-key", help="the server's API key (with --url)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (the POST /v1/audit answer)")
    parser.add_argument("--plot", type=Path, metavar="OUT.png", help="draw the confusion table and failure classes")
    parser.add_argument("--threshold", type=float, default=1.0, help="a score at or above this accepts (default 1)")
    parser.add_argument(
        "--exploits",
        help=f"comma-separated exploit families to run instead of the verifier's own ({', '.join(CORPORA)}), or none",
    )
    parser.add_argument("--fail-on-exploit", action="store_true", help="exit 1 when any exploit is rewarded")
    parser.add_argument("--plugin", action="append", default=None, metavar="FILE.py", help="register a plugin file")
    parser.add_argument("--settings", help="YAML settings file, as `rewardhub serve --config` reads")
    parser.add_argument("--workers", type=int, help="CPU worker processes (default: the number of cores)")
    parser.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="score the cases N times with the reward cache off and report each case's spread (a judge's repeatability)",
    )
    parser.add_argument(
        "--precision", type=float, default=0.05, help="with --repeat: the ± a mean score should reach at 95%% (0.05)"
    )


def audit_command(args: argparse.Namespace) -> int:
    spec = verifier_spec(args.verifier, args.config)
    cases = read_cases(args.cases) if args.cases else []
    chosen = _chosen_families(args.exploits)
    overrides: dict[str, Any] = {"workers": args.workers}
    if args.plugin:
        overrides["plugins"] = args.plugin
    settings = Settings.load(args.settings, **overrides)
    registry = Registry.load(settings.plugins)
    if args.repeat is not None:
        return _repeat_command(args, settings, registry, spec, cases)
    audited = asyncio.run(
        _run_remote(args, spec, cases, registry, chosen)
        if args.url
        else _run_local(settings, registry, spec, cases, chosen, args.threshold)
    )
    if args.plot:
        plot_report(audited.report, audited.confusion, args.plot)
    print(json.dumps(audited.report, indent=2, default=str) if args.json else text_report(audited.report))
    if args.plot and not args.json:
        print(f"\nplot written to {args.plot}")
    return 1 if args.fail_on_exploit and audited.report["exploits"]["rewarded"] else 0


async def _run_local(
    settings: Settings,
    registry: Registry,
    spec: VerifierSpec,
    cases: list[AuditCase],
    chosen: list[str] | None,
    threshold: float,
) -> Audit:
    exploits = exploits_for(spec, registry, chosen)
    async with in_process(settings, registry) as scorer:
        return await run_audit(scorer_score_fn(scorer), spec, cases, exploits, threshold)


async def _run_remote(
    args: argparse.Namespace, spec: VerifierSpec, cases: list[AuditCase], registry: Registry, chosen: list[str] | None
) -> Audit:
    from rewardhub.client import AsyncRewardClient, ClientError

    try:
        return await _audit_through(
            AsyncRewardClient(args.url, api_key=args.api_key, max_retries=2),
            spec,
            cases,
            registry,
            chosen,
            args.threshold,
        )
    except ClientError as exc:
        raise RewardhubError(f"audit through {args.url} failed: {exc}") from None


async def _audit_through(
    client: Any,
    spec: VerifierSpec,
    cases: list[AuditCase],
    registry: Registry,
    chosen: list[str] | None,
    threshold: float,
) -> Audit:
    async with client:
        if chosen is not None:
            exploits = [exploit for name in chosen for exploit in load_corpus(name)]
        else:
            try:
                exploits = exploits_for(spec, registry)
            except UnknownVerifier:  # a plugin the server has and this process does not
                exploits = await _exploits_by_server_kind(client, spec)
        return await run_audit(client_score_fn(client), spec, cases, exploits, threshold)


async def _exploits_by_server_kind(client: Any, spec: VerifierSpec) -> list[Exploit]:
    """The families a verifier known only to the server faces, from its kind in ``GET /v1/verifiers``."""
    name = spec if isinstance(spec, str) else getattr(spec, "name", None)
    kinds = {v["name"]: v["kind"] for v in await client.verifiers()}
    if name not in kinds:
        raise UnknownVerifier(f"the server at {client.base_url} has no verifier named {name!r}")
    family = {"code": "code", "judge": "judge"}.get(kinds[name])
    return list(load_corpus(family)) if family else []


def verifier_spec(text: str, config: str | None) -> VerifierSpec:
    """``math`` or a JSON spec, with ``--config`` as the named verifier's config."""
    from rewardhub.types import VerifierRef

    text = text.strip()
    try:
        spec: Any = json.loads(text) if text.startswith("{") else text
        parsed_config = json.loads(config) if config else None
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"not JSON: {exc}") from None
    if parsed_config is not None:
        if not isinstance(spec, str) or not isinstance(parsed_config, dict):
            raise InvalidRequest("--config takes a JSON object and goes with a verifier name, not a JSON spec")
        return VerifierRef(name=spec, config=parsed_config)
    if isinstance(spec, dict):
        from pydantic import TypeAdapter

        try:
            return TypeAdapter(VerifierSpec).validate_python(spec)
        except ValidationError as exc:
            raise InvalidRequest(f"not a verifier spec: {exc.errors(include_url=False)[0]['msg']}") from None
    return spec


def read_cases(path: Path) -> list[AuditCase]:
    """Labelled cases from JSONL; fields beyond a case's go to its metadata; a bad line names itself."""
    cases = []
    for raw, where in jsonl_objects(path):
        extra = {k: raw.pop(k) for k in list(raw) if k not in CASE_FIELDS}
        if extra:
            raw["metadata"] = {**raw.get("metadata", {}), **extra}
        try:
            cases.append(AuditCase.model_validate(raw))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(part) for part in error["loc"])
            raise InvalidRequest(f"{where}: {field + ': ' if field else ''}{error['msg']}") from None
    return cases


def _chosen_families(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["none"]:
        return []
    unknown = [name for name in names if name not in CORPORA]
    if unknown:
        raise InvalidRequest(f"no exploit family {', '.join(unknown)}; there are {', '.join(CORPORA)}")
    return names


def _repeat_command(
    args: argparse.Namespace, settings: Settings, registry: Registry, spec: VerifierSpec, cases: list[AuditCase]
) -> int:
    """``--repeat N``: the labelled cases scored N times, cache off; the spread report instead of the audit's."""
    from rewardhub.audit.repeat import repeat_report, repeat_text

    if not cases:
        raise InvalidRequest("--repeat scores the labelled cases again and again: give them with --cases")
    if args.repeat < 2:
        raise InvalidRequest("--repeat needs at least 2 rounds to measure a spread")
    table = asyncio.run(
        _repeat_remote(args, spec, cases) if args.url else _repeat_local(settings, registry, spec, cases, args.repeat)
    )
    ids = [case.id or f"case {i}" for i, case in enumerate(cases)]
    report = repeat_report(ids, table, args.threshold, args.precision)
    print(json.dumps(report, indent=2) if args.json else repeat_text(report))
    return 0


async def _repeat_local(
    settings: Settings, registry: Registry, spec: VerifierSpec, cases: list[AuditCase], repeats: int
) -> list[list[Result]]:
    from rewardhub.audit.repeat import run_repeats

    async with in_process(settings, registry) as scorer:
        return await run_repeats(scorer_score_fn(scorer, cache=False), spec, cases, repeats)


async def _repeat_remote(args: argparse.Namespace, spec: VerifierSpec, cases: list[AuditCase]) -> list[list[Result]]:
    from rewardhub.audit.repeat import run_repeats
    from rewardhub.client import AsyncRewardClient, ClientError

    try:
        async with AsyncRewardClient(args.url, api_key=args.api_key, max_retries=2) as client:
            return await run_repeats(client_score_fn(client, cache=False), spec, cases, args.repeat)
    except ClientError as exc:
        raise RewardhubError(f"audit through {args.url} failed: {exc}") from None
