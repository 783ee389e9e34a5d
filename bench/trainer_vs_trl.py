"""rewardhub-train vs TRL's GRPOTrainer on the toy addition task, per step, on one CPU thread.

Same tiny policy (Qwen2-style, hidden 64, 2 layers, 4 heads, random init with the same seed),
same 16-token character tokenizer built locally, same prompts, same batch (4 prompts x 8
completions = 32), same budget (8 new tokens), same learning rate (1e-3), no reference model
(TRL: beta=0; ours: algorithm.kl.reference=false), token-mean loss (TRL's loss_type="dapo"),
group-std advantages, no entropy bonus (``--our-recipe`` keeps ours, with its entropy bonus).
TRL scores with a Python function inside the trainer; ours asks a rewardhub service over HTTP:
by default a `rewardhub serve` started here in its own process, as it would be deployed
(``--embedded`` runs it inside the trainer's process instead, ``--url`` uses a running one).

A step is timed the same way on both sides: wall clock from the end of one optimizer step to the
end of the next (median after warm-up). Prints both, the ratio, and the reward and entropy at the
start and after N steps. Nothing is downloaded.

    python bench/trainer_vs_trl.py --steps 300 --repeats 3
    python bench/trainer_vs_trl.py --steps 300 --embedded
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

from rewardhub.launcher import ServiceProcess

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "examples" / "data" / "addition_train.jsonl"
WARMUP = 5
WINDOW = 20


def records() -> list[dict]:
    return [json.loads(line) for line in TRAIN.read_text().splitlines() if line.strip()]


def run_trl(steps: int, seed: int, out_dir: Path) -> dict:
    from datasets import Dataset
    from rewardhub.trainer.config import ModelConfig
    from rewardhub.trainer.modeling import load_policy
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = load_policy(ModelConfig(), seed=seed)

    def exact_reward(completions: list[str], reference: list[str], **_: object) -> list[float]:
        return [1.0 if c.strip() == r else 0.0 for c, r in zip(completions, reference, strict=True)]

    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.times = [time.perf_counter()]

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001 - TrainerCallback's signature
            self.times.append(time.perf_counter())

    clock = StepClock()
    config = GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=32,
        num_generations=8,
        max_completion_length=8,
        learning_rate=1e-3,
        loss_type="dapo",
        beta=0.0,
        max_steps=steps,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=seed,
        disable_tqdm=True,
    )
    dataset = Dataset.from_list([{"prompt": r["prompt"], "reference": r["reference"]} for r in records()])
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[exact_reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[clock],
    )
    trainer.remove_callback(PrinterCallback)  # one dict per step on stdout otherwise
    trainer.train()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    durations = [b - a for a, b in zip(clock.times, clock.times[1:], strict=False)]
    return {
        "seconds_per_step": statistics.median(durations[WARMUP:] or durations),
        "reward_first": statistics.mean(h["reward"] for h in logs[:WINDOW]),
        "reward_last": statistics.mean(h["reward"] for h in logs[-WINDOW:]),
        "entropy_first": statistics.mean(h.get("entropy", float("nan")) for h in logs[:WINDOW]),
        "entropy_last": statistics.mean(h.get("entropy", float("nan")) for h in logs[-WINDOW:]),
    }


def run_ours(steps: int, seed: int, out_dir: Path, url: str | None, our_recipe: bool) -> dict:
    from rewardhub.trainer.config import TrainConfig
    from rewardhub.trainer.loop import Trainer

    cfg = TrainConfig.model_validate(
        {
            "output_dir": str(out_dir),
            "steps": steps,
            "seed": seed,
            "threads": 1,
            "data": {"train": str(TRAIN)},
            "rollout": {"prompts_per_step": 4, "group_size": 8, "max_new_tokens": 8},
            "reward": {"url": url, "verifier": "exact"}
            if url
            else {"embedded": True, "embedded_in": "thread", "verifier": "exact"},
            "algorithm": {"kl": {"reference": False}}
            if our_recipe
            else {"kl": {"reference": False}, "entropy_coef": 0.0},
            "optim": {"lr": 1e-3},
            "checkpoint": {"save_final": False},
            "logging": {"progress": False},
        }
    )
    trainer = Trainer(cfg)
    ends: list[float] = []
    step = trainer.train_step

    def timed_step(worker):  # noqa: ANN001, ANN202 - the same clock as TRL's on_step_end
        row = step(worker)
        ends.append(time.perf_counter())
        return row

    trainer.train_step = timed_step  # type: ignore[method-assign]
    rows = trainer.run()
    durations = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    return {
        "seconds_per_step": statistics.median(durations[WARMUP:] or durations),
        "reward_first": statistics.mean(r["reward/mean"] for r in rows[:WINDOW]),
        "reward_last": statistics.mean(r["reward/mean"] for r in rows[-WINDOW:]),
        "entropy_first": statistics.mean(r["actor/entropy"] for r in rows[:WINDOW]),
        "entropy_last": statistics.mean(r["actor/entropy"] for r in rows[-WINDOW:]),
        "generate_s": statistics.median(r["time/generate_s"] for r in rows[WARMUP:]),
        "reward_wait_s": statistics.median(r["time/reward_s"] for r in rows[WARMUP:]),
        "reward_latency_s": statistics.median(r["reward/latency_s"] for r in rows[WARMUP:]),
        "train_s": statistics.median(r["time/train_s"] for r in rows[WARMUP:]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="rewardhub-train vs TRL GRPOTrainer, seconds per step on one CPU thread."
    )
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeats", type=int, default=1, help="alternate the two this many times; the median ratio is reported"
    )
    parser.add_argument("--url", default=None, help="a running rewardhub service")
    parser.add_argument("--embedded", action="store_true", help="run the service inside the trainer's process")
    parser.add_argument("--our-recipe", action="store_true", help="keep our default algorithm (entropy bonus)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    parser.add_argument("--only", choices=["ours", "trl"], default=None)
    parser.add_argument("--run-one", choices=["ours", "trl"], default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    if args.run_one:  # one side, in this fresh process, numbers to --json
        with tempfile.TemporaryDirectory() as tmp:
            if args.run_one == "trl":
                result = run_trl(args.steps, args.seed, Path(tmp))
            else:
                result = run_ours(args.steps, args.seed, Path(tmp), args.url, args.our_recipe)
        args.json.write_text(json.dumps(result))
        return 0
    sides = [args.only] if args.only else ["trl", "ours"]
    runs: list[dict[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        url = args.url
        if url is None and not args.embedded and "ours" in sides:
            url = stack.enter_context(ServiceProcess(workers=1))
        # each run in a fresh interpreter, so neither inherits the other's garbage and threads;
        # alternating the two spreads any drift in the machine's speed over both sides
        for repeat in range(args.repeats):
            results: dict[str, dict] = {}
            for side in sides:
                out = Path(tmp) / f"{side}-{repeat}.json"
                command = [sys.executable, __file__, "--run-one", side, "--steps", str(args.steps)]
                command += ["--seed", str(args.seed), "--json", str(out)]
                command += ["--url", url] if url else []
                command += ["--our-recipe"] if args.our_recipe else []
                subprocess.run(command, check=True)
                results["trl" if side == "trl" else "rewardhub"] = json.loads(out.read_text())
            runs.append(results)
    print(f"{'':12} {'s/step':>8} {'reward first→last':>20} {'entropy first→last':>20}")
    for results in runs:
        for name, r in results.items():
            print(
                f"{name:12} {r['seconds_per_step']:8.4f} {r['reward_first']:9.3f} → {r['reward_last']:6.3f}"
                f" {r['entropy_first']:10.3f} → {r['entropy_last']:6.3f}"
            )
    summary: dict[str, object] = {"steps": args.steps, "runs": runs}
    ours = [r["rewardhub"] for r in runs if "rewardhub" in r]
    if ours:
        split = {k: statistics.median(r[k] for r in ours) * 1000 for k in ("generate_s", "train_s", "reward_wait_s")}
        print(
            f"rewardhub step split (ms): generate {split['generate_s']:.1f}, train {split['train_s']:.1f},"
            f" waiting for rewards {split['reward_wait_s']:.1f}"
        )
    ratios = [r["trl"]["seconds_per_step"] / r["rewardhub"]["seconds_per_step"] for r in runs if len(r) == 2]
    if ratios:
        ratio = statistics.median(ratios)
        summary["trl_over_rewardhub"] = ratio
        each = ", ".join(f"{x:.2f}" for x in ratios)
        print(
            f"rewardhub-train is {ratio:.2f}x {'faster' if ratio >= 1 else 'slower'} per step"
            f" (median of {len(ratios)}: {each}; goal: >= 1.5x)"
        )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
