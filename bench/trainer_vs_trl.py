"""rewardhub-train vs TRL's GRPOTrainer on the toy addition task, per step, on one CPU thread.

Same tiny policy (Qwen2-style, hidden 64, 2 layers, 4 heads, random init with the same seed),
same 16-token character tokenizer built locally, same prompts, same batch (4 prompts x 8
completions = 32), same budget (8 new tokens), same learning rate (1e-3), no reference model
(TRL: beta=0; ours: algorithm.kl.reference=false), token-mean loss (TRL's loss_type="dapo").
TRL scores with a Python function in its own process; ours asks a rewardhub service over HTTP
(an embedded one, or --url). Each side uses its own default algorithm otherwise: TRL's GRPO
("dapo" loss, no entropy bonus) and ours (GRPO with a small entropy bonus).

Prints seconds per step (median after warm-up) for both, the ratio, and the reward and entropy
at the start and after N steps. Nothing is downloaded.

    python bench/trainer_vs_trl.py --steps 300
    python bench/trainer_vs_trl.py --steps 300 --url http://127.0.0.1:8000   # a running `rewardhub serve`
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "examples" / "data" / "addition_train.jsonl"
WARMUP = 5
WINDOW = 20


def records() -> list[dict]:
    return [json.loads(line) for line in TRAIN.read_text().splitlines() if line.strip()]


def run_trl(steps: int, seed: int, out_dir: Path) -> dict:
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trainer_client.config import ModelConfig
    from trainer_client.modeling import load_policy

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


def run_ours(steps: int, seed: int, out_dir: Path, url: str | None) -> dict:
    from trainer_client.config import TrainConfig
    from trainer_client.loop import Trainer

    cfg = TrainConfig.model_validate(
        {
            "output_dir": str(out_dir),
            "steps": steps,
            "seed": seed,
            "threads": 1,
            "data": {"train": str(TRAIN)},
            "rollout": {"prompts_per_step": 4, "group_size": 8, "max_new_tokens": 8},
            "reward": {"url": url, "verifier": "exact"} if url else {"embedded": True, "verifier": "exact"},
            "algorithm": {"kl": {"reference": False}},
            "optim": {"lr": 1e-3},
            "checkpoint": {"save_final": False},
            "logging": {"progress": False},
        }
    )
    rows = Trainer(cfg).run()
    durations = [r["time/step_s"] for r in rows]
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
    parser.add_argument("--url", default=None, help="a running rewardhub service (default: an embedded one)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    parser.add_argument("--only", choices=["ours", "trl"], default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "trl"):
            results["trl"] = run_trl(args.steps, args.seed, Path(tmp) / "trl")
        if args.only in (None, "ours"):
            results["rewardhub"] = run_ours(args.steps, args.seed, Path(tmp) / "ours", args.url)
    print(f"{'':12} {'s/step':>8} {'reward first→last':>20} {'entropy first→last':>20}")
    for name, r in results.items():
        print(
            f"{name:12} {r['seconds_per_step']:8.4f} {r['reward_first']:9.3f} → {r['reward_last']:6.3f}"
            f" {r['entropy_first']:10.3f} → {r['entropy_last']:6.3f}"
        )
    if len(results) == 2:
        ratio = results["trl"]["seconds_per_step"] / results["rewardhub"]["seconds_per_step"]
        results["speedup"] = {"trl_over_rewardhub": ratio}
        print(f"rewardhub-train is {ratio:.2f}x {'faster' if ratio >= 1 else 'slower'} per step (goal: >= 1.5x)")
    if args.json:
        args.json.write_text(json.dumps({"steps": args.steps, **results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
