"""``rewardhub audit code --mutants DATASET.jsonl``: the problems whose tests accept a broken solution.

A mode of ``rewardhub audit``: the verifier argument names the ``code`` verifier (``code``, or
``code`` with ``--config``), and every reference and mutant is scored through it, in this process
through the same executor and scorer ``rewardhub serve`` runs (the sandbox), or with ``--url``
on a running server's ``POST /v1/score``; the cache is never consulted (a verdict is only ever a
run). ``--report FILE`` writes one JSON line per weak problem (``id``, ``mutants_accepted``,
``accepted``: kind and diff), the file ``data.weak_tasks`` of the bundled trainer reads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from rewardhub.audit.code_tasks import CodeTask, code_task
from rewardhub.audit.mutation import GAMEABILITY_KINDS, KINDS
from rewardhub.audit.run import in_process, scorer_score_fn
from rewardhub.audit.stored import jsonl_objects
from rewardhub.audit.weak_tests import TaskAudit, audit_mutants, summary
from rewardhub.errors import InvalidRequest, RewardhubError
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierRef, VerifierSpec

REMOTE_IN_FLIGHT = 4
"""Requests in flight at once with --url: one chunk at a time left the server's workers idle while
each chunk's slowest program (a mutant that loops until its clock) finished."""

__all__ = ["add_arguments", "mutants_spec", "read_tasks", "weak_tests_command", "weak_tests_text"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The mode's options, beside ``rewardhub audit``'s own."""
    group = parser.add_argument_group("weak tests (with --mutants; VERIFIER is code)")
    group.add_argument(
        "--mutants",
        type=Path,
        metavar="DATASET.jsonl",
        help="mutate each problem's reference solution and list the problems whose tests accept a broken one",
    )
    group.add_argument("--max-mutants", type=int, default=24, help="mutants per problem at most (default 24)")
    group.add_argument("--seed", type=int, default=0, help="seeds the mutants' order and the fresh inputs (0)")
    group.add_argument("--fresh-inputs", type=int, default=32, help="inputs a survivor is compared on (default 32)")
    group.add_argument("--limit", type=int, help="audit only the first N problems")
    group.add_argument("--report", type=Path, metavar="OUT.jsonl", help="write the weak problems, one JSON line each")
    group.add_argument("--show", type=int, default=1, help="accepted mutants printed per weak problem (default 1)")
    group.add_argument(
        "--kinds",
        help=f"comma-separated mutation kinds ({', '.join(KINDS)}), or gameability for the census's six (default: all)",
    )
    group.add_argument(
        "--test-timeout",
        type=float,
        default=6.0,
        help="the most seconds a test may run (default 6); a mutant's clock is 10x its reference's slowest test",
    )


def mutants_spec(verifier: VerifierSpec, test_timeout_s: float) -> VerifierRef:
    """The code verifier, all or nothing: a mutant passes only when every test does."""
    name = verifier if isinstance(verifier, str) else getattr(verifier, "name", None)
    if name != "code":
        raise InvalidRequest("--mutants runs programs against their tests: the verifier must be code")
    config = dict(getattr(verifier, "config", None) or {})
    config.update(scoring="all_or_nothing", test_timeout_s=config.get("test_timeout_s", test_timeout_s))
    return VerifierRef(name="code", config=config)


def chosen_kinds(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    names = [kind for name in names for kind in (GAMEABILITY_KINDS if name == "gameability" else [name])]
    unknown = [name for name in names if name not in KINDS]
    if unknown or not names:
        raise InvalidRequest(f"no mutation kind {', '.join(unknown) or repr(text)}; there are {', '.join(KINDS)}")
    return names


def read_tasks(path: Path, limit: int | None = None) -> list[CodeTask]:
    tasks = [code_task(raw, where) for raw, where in jsonl_objects(path)]
    if len({task.id for task in tasks}) != len(tasks):
        raise InvalidRequest(f"{path}: two problems share an id; the report could not tell them apart")
    return tasks[:limit] if limit else tasks


def weak_tests_command(args: argparse.Namespace, verifier: VerifierSpec) -> int:
    if args.max_mutants < 1 or args.fresh_inputs < 0:
        raise InvalidRequest("--max-mutants must be at least 1 and --fresh-inputs at least 0")
    spec = mutants_spec(verifier, args.test_timeout)
    kinds = chosen_kinds(args.kinds)
    tasks = read_tasks(args.mutants, args.limit)
    run = _remote(args, spec, tasks, kinds) if args.url else _local(args, spec, tasks, kinds)
    audits = asyncio.run(run)
    if args.report:
        write_report(audits, args.report)
    head = {
        **summary(audits),
        "dataset": str(args.mutants),
        "max_mutants": args.max_mutants,
        "seed": args.seed,
        "fresh_inputs": args.fresh_inputs,
        "kinds": kinds or list(KINDS),
    }
    if args.json:
        print(json.dumps({**head, "problems_audited": [_json(a) for a in audits]}, indent=2))
    else:
        print(weak_tests_text(head, audits, args.show))
        if args.report:
            print(f"\nreport written to {args.report}")
    return 1 if args.fail_on_exploit and head["weak"] else 0


def write_report(audits: list[TaskAudit], path: Path) -> None:
    with path.open("w") as handle:
        for audit in audits:
            if audit.weak:
                handle.write(json.dumps(audit.report_line()) + "\n")


def _json(audit: TaskAudit) -> dict[str, Any]:
    return {
        "id": audit.id,
        "status": audit.status,
        "weak": audit.weak,
        "note": audit.note,
        "fresh_inputs": audit.fresh_inputs,
        "mutants": [
            {"kind": m.kind, "passed_tests": m.passed_tests, "broken": m.broken, "error": m.error, "diff": m.diff}
            for m in audit.mutants
        ],
    }


def weak_tests_text(head: dict[str, Any], audits: list[TaskAudit], show: int = 1) -> str:
    lines = [
        f"{head['dataset']}: {head['judged']} of {head['problems']} problems judged "
        f"({head['max_mutants']} mutants each at most, seed {head['seed']})",
        f"  {head['weak']} accept a broken solution ({100 * head['weak_share']:.1f}%): "
        f"{head['accepted']} of {head['mutants']} mutants accepted and told apart from the reference on fresh inputs",
        f"  {head['unconfirmed']} more survivors agree with the reference on every fresh input (maybe equivalent; not counted)",
    ]
    if head["left_out"]:
        lines.append("  left out: " + ", ".join(f"{why} {n}" for why, n in sorted(head["left_out"].items())))
    if head["not_judged"]:
        lines.append(f"  {head['not_judged']} mutant runs gave no verdict (sandbox or verifier errors)")
    if head["accepted_by_kind"]:
        lines.append("  accepted by kind: " + ", ".join(f"{k} {n}" for k, n in head["accepted_by_kind"].items()))
    for audit in audits:
        if not audit.weak:
            continue
        lines += ["", f"{audit.id}: {len(audit.accepted)} of {len(audit.mutants)} mutants accepted"]
        for mutant in audit.accepted[:show]:
            lines.append(f"  [{mutant.kind}]")
            lines += ["    " + line for line in mutant.diff.rstrip("\n").splitlines()]
    return "\n".join(lines)


async def _local(
    args: argparse.Namespace, spec: VerifierRef, tasks: list[CodeTask], kinds: list[str] | None
) -> list[TaskAudit]:
    overrides: dict[str, Any] = {"workers": args.workers, "code_workers": args.workers, "cache_backend": "off"}
    if args.plugin:
        overrides["plugins"] = args.plugin
    settings = Settings.load(args.settings, **overrides)
    registry = Registry.load(settings.plugins)
    async with in_process(settings, registry) as scorer:
        score = scorer_score_fn(scorer, cache=False)
        return await audit_mutants(score, spec, tasks, args.max_mutants, args.seed, args.fresh_inputs, kinds)


async def _remote(
    args: argparse.Namespace, spec: VerifierRef, tasks: list[CodeTask], kinds: list[str] | None
) -> list[TaskAudit]:
    from rewardhub.audit.run import CLIENT_CHUNK
    from rewardhub.client import AsyncRewardClient, ClientError

    client = AsyncRewardClient(args.url, api_key=args.api_key, max_retries=2)

    in_flight = asyncio.Semaphore(REMOTE_IN_FLIGHT)

    async def chunk_results(chunk: list[Sample], spec: VerifierSpec) -> list[Result]:
        async with in_flight:
            return await client.score(chunk, spec, cache=False)

    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        chunks = [samples[start : start + CLIENT_CHUNK] for start in range(0, len(samples), CLIENT_CHUNK)]
        answers = await asyncio.gather(*(chunk_results(chunk, spec) for chunk in chunks))
        return [result for answer in answers for result in answer]

    try:
        async with client:
            return await audit_mutants(score, spec, tasks, args.max_mutants, args.seed, args.fresh_inputs, kinds)
    except ClientError as exc:
        raise RewardhubError(f"audit through {args.url} failed: {exc}") from None
