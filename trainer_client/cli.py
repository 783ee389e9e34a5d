"""``rewardhub-train``: train, check, plot.

    rewardhub-train CONFIG.yaml [key=value ...]        train (overrides use dotted keys: optim.lr=3e-4)
    rewardhub-train CONFIG.yaml --dry-run [overrides]  validate the config, the data and the service, then stop
    rewardhub-train plot RUN_DIR [--out FILE]          draw the run's curves to a PNG
    rewardhub-train metrics                            print the table of logged metrics
    rewardhub-train config                             print every configuration key with its default and meaning

The resolved configuration (file + overrides + defaults) is printed and saved as
``output_dir/config.yaml`` before training starts.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.syntax import Syntax

from rewardhub.client import ClientError

from .config import TrainConfig, load_config

__all__ = ["dry_run", "main"]

EXIT_CONFIG = 2
EXIT_SERVICE = 3


def _train_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardhub-train",
        description="GRPO-family RL against a rewardhub service. Also: `rewardhub-train plot RUN_DIR`, "
        "`rewardhub-train metrics`, `rewardhub-train config`.",
    )
    parser.add_argument("config", help="YAML file (see examples/toy_addition.yaml)")
    parser.add_argument("overrides", nargs="*", help="key=value overrides with dotted keys, e.g. rollout.group_size=8")
    parser.add_argument("--dry-run", action="store_true", help="check config, data and the reward service, then exit")
    parser.add_argument("--quiet", action="store_true", help="do not print the resolved config")
    return parser


def _plot(argv: Sequence[str], console: Console) -> int:
    from .plot import plot_run

    parser = argparse.ArgumentParser(prog="rewardhub-train plot", description="Draw a run's curves to a PNG.")
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None, help="PNG path (default RUN_DIR/curves.png)")
    args = parser.parse_args(argv)
    try:
        path = plot_run(args.run_dir, args.out)
    except FileNotFoundError as exc:
        console.print(f"[red]{exc}[/red]")
        return 1
    console.print(f"wrote {path}")
    return 0


def dry_run(cfg: TrainConfig, console: Console) -> int:
    """Load the data and tokenizer, reach the service, check the verifiers exist and accept a sample."""
    from rewardhub.background import RewardThread
    from rewardhub.types import Sample

    from .data import load_records, tokenize_prompt
    from .modeling import load_tokenizer
    from .rewards import reward_service, service_scorer, verifier_label

    train = load_records(cfg.data, "train")
    held_out = load_records(cfg.data, "eval")
    tokenizer = load_tokenizer(cfg.model)
    longest = max(len(tokenize_prompt(tokenizer, r.prompt, cfg.data.max_prompt_tokens)) for r in train + held_out)
    console.print(f"data: {len(train)} training prompts, {len(held_out)} held-out; longest prompt {longest} tokens")
    wanted = {verifier_label(r.verifier if r.verifier is not None else cfg.reward.verifier) for r in train + held_out}
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(reward_service(cfg))
            channel = stack.enter_context(RewardThread(service_scorer(cfg.reward, url)))
            channel.call("health")
            names = {v["name"] for v in channel.call("verifiers")}
        except Exception as exc:  # any failure to reach the service is the finding we report
            console.print(f"[red]reward service unreachable: {exc}[/red]")
            return EXIT_SERVICE
        missing = sorted(w for w in wanted if w not in names and w not in {"sum", "gate", "default"})
        if missing:
            console.print(f"[red]verifiers not registered on {url}: {missing}[/red]")
            return EXIT_SERVICE
        first = train[0]
        probe = Sample(prompt=first.prompt, response="", reference=first.reference, verifier=first.verifier)
        result = channel.submit([probe], cfg.reward.verifier).result().results[0]
        console.print(f"service {url}: verifiers {sorted(wanted)} present; probe sample -> status {result.status}")
    console.print("[green]dry run ok[/green]")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    console = Console(stderr=True)
    if argv and argv[0] == "plot":
        return _plot(argv[1:], console)
    if argv and argv[0] == "config":
        from .config import config_reference

        print("| key | default | meaning |\n| --- | --- | --- |")
        for key, default, meaning in config_reference():
            print(f"| `{key}` | `{default}` | {meaning} |")
        return 0
    if argv and argv[0] == "metrics":
        from .metrics import format_metrics_table

        print(format_metrics_table())
        return 0
    args = _train_parser().parse_intermixed_args(argv)
    try:
        cfg = load_config(args.config, args.overrides)
    except (ValidationError, ValueError, FileNotFoundError) as exc:
        console.print(f"[red]invalid configuration:[/red]\n{exc}")
        return EXIT_CONFIG
    if not args.quiet:
        console.print(Syntax(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), "yaml", theme="ansi_dark"))
    if args.dry_run:
        return dry_run(cfg, console)
    from .loop import Trainer

    trainer = Trainer(cfg, console=console)
    console.print(f"resolved config saved to {trainer.save_resolved_config()}")
    try:
        with _sigterm_unwinds():
            rows = trainer.run()
    except ClientError as exc:  # the service went away or refused the batch: say so, not a traceback
        console.print(f"[red]reward service error at step {trainer.step + 1}:[/red] {exc}")
        return EXIT_SERVICE
    if rows:
        last = rows[-1]
        console.print(
            f"done: step {last['step']}, reward {last['reward/mean']:.3f}, entropy {last['actor/entropy']:.3f}"
        )
    return 0


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, ``kill``) unwinds like Ctrl-C instead of ending the process on
    the spot, so the reward service, the scoring process and the metric files are closed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    raise SystemExit(main())
