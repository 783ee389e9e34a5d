"""``rewardhub reverify FILE --verifier SPEC``: the command's work, kept out of ``cli.py``.

The old verdicts are those stored in FILE (see :mod:`rewardhub.audit.stored` for the shapes it
reads), or those of ``--against SPEC``. The new ones come from the service's own scorer in this
process, or with ``--url`` from a running server; the cache is never consulted in process (a
re-verification that served yesterday's verdicts would find no flips).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from rewardhub.audit.command import verifier_spec
from rewardhub.audit.reverify import check_old_side, run_reverify
from rewardhub.audit.reverify_report import plot_reverify, text_reverify
from rewardhub.audit.run import ScoreFn, client_score_fn, in_process, scorer_score_fn
from rewardhub.audit.stored import Stored, read_stored
from rewardhub.errors import RewardhubError
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import VerifierSpec

__all__ = ["add_arguments", "reverify_command"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=Path,
        help="JSONL: samples with their result, the trainer's dumps, the operator page's sample entries, "
        "or rewardhub score's output (with --samples)",
    )
    parser.add_argument("--verifier", required=True, help="the verifier to score with now: a name or a JSON spec")
    parser.add_argument("--config", help="the verifier's config as JSON (with a verifier name)")
    parser.add_argument("--against", help="score the old side with this spec instead of reading stored verdicts")
    parser.add_argument("--samples", type=Path, help="the file rewardhub score read, when FILE is its output")
    parser.add_argument("--url", help="score through a running rewardhub server instead of in process")
    parser.add_argument("--api-key", help="the server's API key (with --url)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (the POST /v1/reverify answer)")
    parser.add_argument("--plot", type=Path, metavar="OUT.png", help="draw the flips per failure class")
    parser.add_argument("--threshold", type=float, default=1.0, help="a score at or above this passes (default 1)")
    parser.add_argument("--show", type=int, default=50, help="changed samples listed in the text report")
    parser.add_argument("--fail-on-flip", action="store_true", help="exit 1 when any verdict flipped")
    parser.add_argument("--plugin", action="append", default=None, metavar="FILE.py", help="register a plugin file")
    parser.add_argument("--settings", help="YAML settings file, as `rewardhub serve --config` reads")
    parser.add_argument("--workers", type=int, help="CPU worker processes (default: the number of cores)")


def reverify_command(args: argparse.Namespace) -> int:
    spec = verifier_spec(args.verifier, args.config)
    against = verifier_spec(args.against, None) if args.against else None
    stored = read_stored(args.file, args.samples)
    check_old_side(stored, against)
    report = asyncio.run(_remote(args, spec, against, stored) if args.url else _local(args, spec, against, stored))
    if args.plot:
        plot_reverify(report, args.plot)
    print(json.dumps(report, indent=2, default=str) if args.json else text_reverify(report, args.show))
    if args.plot and not args.json:
        print(f"\nplot written to {args.plot}")
    return 1 if args.fail_on_flip and report["flipped"] else 0


async def _local(
    args: argparse.Namespace, spec: VerifierSpec, against: VerifierSpec | None, stored: list[Stored]
) -> dict[str, Any]:
    overrides: dict[str, Any] = {"workers": args.workers, "cache_backend": "off"}
    if args.plugin:
        overrides["plugins"] = args.plugin
    settings = Settings.load(args.settings, **overrides)
    registry = Registry.load(settings.plugins)
    async with in_process(settings, registry) as scorer:
        return await run_reverify(scorer_score_fn(scorer, cache=False), spec, stored, against, args.threshold)


async def _remote(
    args: argparse.Namespace, spec: VerifierSpec, against: VerifierSpec | None, stored: list[Stored]
) -> dict[str, Any]:
    from rewardhub.client import AsyncRewardClient, ClientError

    try:
        async with AsyncRewardClient(args.url, api_key=args.api_key, max_retries=2) as client:
            score: ScoreFn = client_score_fn(client)
            return await run_reverify(score, spec, stored, against, args.threshold)
    except ClientError as exc:
        raise RewardhubError(f"reverify through {args.url} failed: {exc}") from None
