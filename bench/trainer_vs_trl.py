"""rewardhub-train vs TRL's GRPOTrainer on the toy addition task, per step, on one CPU thread.

Same tiny policy (Qwen2-style, hidden 64, 2 layers, 4 heads, random init with the same seed),
same 16-token character tokenizer built locally, same prompts, same batch (4 prompts x 8
completions = 32), same budget (8 new tokens), and the same recipe, set explicitly on both sides and printed
(:data:`RECIPE`): learning rate 1e-3 decayed linearly to 0 over the run (TRL's default
schedule), AdamW (0.9, 0.999, eps 1e-8, no weight decay), gradient norm clipped at 1.0, no
reference model (TRL: beta=0; ours: algorithm.kl.reference=false), the PPO ratio clipped
symmetrically at 0.2, token-mean loss over the batch (TRL's loss_type="dapo"), group-std
advantages with TRL's 1e-4 in the denominator, sampling at temperature 1 with no top-p or top-k,
no entropy bonus (``--our-recipe`` keeps ours, with its entropy bonus).

Equal learning comes first: ``--seeds`` runs of ``--steps`` steps per side, the mean reward per
window of steps printed side by side (and completion lengths), then the speed: seconds per step.
TRL scores with a Python function inside the trainer; ours asks a rewardhub service over HTTP:
by default a `rewardhub serve` started here in its own process, as it would be deployed
(``--embedded`` runs it inside the trainer's process instead, ``--url`` uses a running one).

A step is timed the same way on both sides: wall clock from the end of one optimizer step to the
end of the next (median after warm-up). Prints both, the ratio, and the reward and entropy at the
start and after N steps. Nothing is downloaded.

    python bench/trainer_vs_trl.py --steps 600 --seeds 0,1,2
    python bench/trainer_vs_trl.py --steps 300 --embedded
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

import torch

from rewardhub.launcher import ServiceProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import StepClock, clock_rewardhub_steps, run_fresh, trl_step_callback, write_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "examples" / "data" / "addition_train.jsonl"
WARMUP = 5
WINDOW = 20
RECIPE = {
    "learning rate": "1e-3, linear decay to 0, no warm-up",
    "optimizer": "AdamW (0.9, 0.999), eps 1e-8, weight decay 0, grad norm clip 1.0",
    "batch": "4 prompts x 8 completions, 8 new tokens, 1 update per batch",
    "sampling": "temperature 1.0, top-p 1.0, no top-k",
    "policy loss": "PPO clip 0.2 / 0.2, token mean over the batch (TRL dapo)",
    "advantage": "(r - group mean) / (group std + 1e-4)",
    "regularisers": "no KL, no reference model, no entropy bonus",
}


def records() -> list[dict]:
    return [json.loads(line) for line in TRAIN.read_text().splitlines() if line.strip()]


def run_trl(steps: int, seed: int, out_dir: Path) -> dict:
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    from rewardhub.trainer.config import ModelConfig
    from rewardhub.trainer.modeling import load_policy

    model, tokenizer = load_policy(ModelConfig(), seed=seed)

    def exact_reward(completions: list[str], reference: list[str], **_: object) -> list[float]:
        return [1.0 if c.strip() == r else 0.0 for c, r in zip(completions, reference, strict=True)]

    clock = StepClock()
    config = GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=32,
        num_generations=8,
        max_completion_length=8,
        learning_rate=1e-3,
        lr_scheduler_type="linear",
        warmup_steps=0,
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
        weight_decay=0.0,
        max_grad_norm=1.0,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        epsilon=0.2,
        epsilon_high=0.2,
        scale_rewards="group",
        num_iterations=1,
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
        callbacks=[trl_step_callback(clock)],
    )
    trainer.remove_callback(PrinterCallback)  # one dict per step on stdout otherwise
    trainer.train()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    return {
        "seconds_per_step": clock.seconds_per_step(WARMUP),
        "reward_first": statistics.mean(h["reward"] for h in logs[:WINDOW]),
        "reward_last": statistics.mean(h["reward"] for h in logs[-WINDOW:]),
        "entropy_first": statistics.mean(h.get("entropy", float("nan")) for h in logs[:WINDOW]),
        "entropy_last": statistics.mean(h.get("entropy", float("nan")) for h in logs[-WINDOW:]),
        "rewards": [h["reward"] for h in logs],
        "lengths": [h.get("completions/mean_length", float("nan")) for h in logs],
        "lr_first_last": [logs[0].get("learning_rate"), logs[-1].get("learning_rate")],
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
            "reward": {"url": url, "verifier": "exact"}
            if url
            else {"embedded": True, "embedded_in": "thread", "verifier": "exact"},
            "rollout": {
                "prompts_per_step": 4,
                "group_size": 8,
                "max_new_tokens": 8,
                "temperature": 1.0,
                "top_p": 1.0,
                "top_k": 0,
            },
            "algorithm": {"kl": {"reference": False}}
            if our_recipe
            else {
                "kl": {"reference": False},
                "entropy_coef": 0.0,
                "clip_low": 0.2,
                "clip_high": 0.2,
                "std_eps": 1e-4,
                "aggregation": "token_mean",
            },
            "optim": {
                "lr": 1e-3,
                "schedule": "linear",
                "warmup_steps": 0,
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "weight_decay": 0.0,
                "max_grad_norm": 1.0,
            },
            "checkpoint": {"save_final": False},
            "logging": {"progress": False},
        }
    )
    trainer = Trainer(cfg)
    clock = StepClock()
    clock_rewardhub_steps(trainer, clock)  # the same clock as TRL's on_step_end
    rows = trainer.run()
    return {
        "seconds_per_step": clock.seconds_per_step(WARMUP),
        "reward_first": statistics.mean(r["reward/mean"] for r in rows[:WINDOW]),
        "reward_last": statistics.mean(r["reward/mean"] for r in rows[-WINDOW:]),
        "entropy_first": statistics.mean(r["actor/entropy"] for r in rows[:WINDOW]),
        "entropy_last": statistics.mean(r["actor/entropy"] for r in rows[-WINDOW:]),
        "generate_s": statistics.median(r["time/generate_s"] for r in rows[WARMUP:]),
        "reward_wait_s": statistics.median(r["time/reward_s"] for r in rows[WARMUP:]),
        "reward_latency_s": statistics.median(r["reward/latency_s"] for r in rows[WARMUP:]),
        "train_s": statistics.median(r["time/train_s"] for r in rows[WARMUP:]),
        "rewards": [r["reward/mean"] for r in rows],
        "lengths": [r.get("response/length_mean", float("nan")) for r in rows],
        "lr_first_last": [rows[0].get("actor/lr"), rows[-1].get("actor/lr")],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="rewardhub-train vs TRL GRPOTrainer, seconds per step on one CPU thread."
    )
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds, one run per side each")
    parser.add_argument("--window", type=int, default=50, help="steps per row of the reward curves")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeats", type=int, default=1, help="with --seeds '': runs of --seed, alternating; the median ratio counts"
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
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed] * args.repeats
    print("recipe, identical on both sides:")
    for key, value in RECIPE.items():
        print(f"  {key:<14} {value}")
    runs: list[dict[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        url = args.url
        if url is None and not args.embedded and "ours" in sides:
            url = stack.enter_context(ServiceProcess(workers=1))
        # each run in a fresh interpreter, so neither inherits the other's garbage and threads;
        # the order alternates from run to run, spreading any drift in the machine's speed over both
        for index, seed in enumerate(seeds):
            results: dict[str, dict] = {}
            for side in sides if index % 2 == 0 else list(reversed(sides)):
                command = ["--run-one", side, "--steps", str(args.steps), "--seed", str(seed)]
                command += ["--url", url] if url else []
                command += ["--our-recipe"] if args.our_recipe else []
                result = run_fresh(__file__, command, Path(tmp) / f"{side}-{index}.json")
                results["trl" if side == "trl" else "rewardhub"] = {"seed": seed, **result}
            runs.append(results)
    summary = report(runs, args.steps, args.window)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


def _windows(values: list[float], size: int) -> list[float]:
    return [statistics.mean(values[i : i + size]) for i in range(0, len(values), size) if values[i : i + size]]


def report(runs: list[dict[str, dict]], steps: int, window: int) -> dict[str, object]:
    """Learning first (reward per window of steps, completion lengths), then speed."""
    names = [n for n in ("trl", "rewardhub") if all(n in r for r in runs)]
    print(f"\nmean reward per {window} steps, seeds {[r[names[0]]['seed'] for r in runs]} (mean over seeds):")
    curves = {}
    for name in names:
        per_seed = [_windows(r[name]["rewards"], window) for r in runs]
        curves[name] = [statistics.mean(col) for col in zip(*per_seed, strict=False)]
    print(f"{'steps':>11} " + " ".join(f"{n:>10}" for n in names))
    for w in range(max(len(c) for c in curves.values())):
        cells = " ".join(f"{curves[n][w]:10.3f}" if w < len(curves[n]) else f"{'':>10}" for n in names)
        print(f"{w * window:>5}-{min(steps, (w + 1) * window) - 1:<5} {cells}")
    print(
        f"\n{'':12} {'seed':>4} {'s/step':>8} {'reward first→last':>20} {'entropy first→last':>20} {'length first→last':>18} {'lr first→last':>22}"
    )
    for results in runs:
        for name, r in results.items():
            lengths = [x for x in r["lengths"] if x == x]
            length = (
                f"{statistics.mean(lengths[:WINDOW]):7.2f} → {statistics.mean(lengths[-WINDOW:]):6.2f}"
                if lengths
                else "n/a"
            )
            lr = r.get("lr_first_last") or [None, None]
            print(
                f"{name:12} {r['seed']:>4} {r['seconds_per_step']:8.4f} {r['reward_first']:9.3f} → {r['reward_last']:6.3f}"
                f" {r['entropy_first']:10.3f} → {r['entropy_last']:6.3f} {length:>18} {lr[0]!s:>10} → {lr[1]!s:<10}"
            )
    summary: dict[str, object] = {"steps": steps, "runs": runs, "curves": curves}
    ours = [r["rewardhub"] for r in runs if "rewardhub" in r]
    if ours:
        split = {k: statistics.median(r[k] for r in ours) * 1000 for k in ("generate_s", "train_s", "reward_wait_s")}
        print(
            f"rewardhub step split (ms): generate {split['generate_s']:.1f}, train {split['train_s']:.1f},"
            f" waiting for rewards {split['reward_wait_s']:.1f}"
        )
    ratios = [r["trl"]["seconds_per_step"] / r["rewardhub"]["seconds_per_step"] for r in runs if len(r) == 2]
    rows = []
    if len(names) == 2:
        last = {n: statistics.mean(r[n]["reward_last"] for r in runs) for n in names}
        rows.append(
            {
                "case": f"toy addition, {len(runs)} seeds x {steps} steps: mean reward of the last {WINDOW} steps",
                "baseline": "TRL GRPOTrainer, identical recipe",
                "baseline_value": f"{last['trl']:.3f}",
                "ours_value": f"{last['rewardhub']:.3f}",
                "unit": "reward",
                "ratio": None,
                "note": "equal learning first: curves in bench/results/trainer_vs_trl.log",
            }
        )
    if ratios:
        # The row's ratio is the ratio of the two medians it shows (so a reader can check it);
        # the per-run ratios of the alternating pairs go beside it, to show how much they spread.
        trl = statistics.median(r["trl"]["seconds_per_step"] for r in runs if len(r) == 2)
        ours = statistics.median(r["rewardhub"]["seconds_per_step"] for r in runs if len(r) == 2)
        ratio = trl / ours
        summary["trl_over_rewardhub"] = ratio
        each = ", ".join(f"{x:.2f}" for x in ratios)
        print(
            f"rewardhub-train is {ratio:.2f}x {'faster' if ratio >= 1 else 'slower'} per step"
            f" (median s/step {trl:.4f} against {ours:.4f}; per run: {each})"
        )
        rows.append(
            {
                "case": f"toy addition, seconds per step ({len(ratios)} runs, alternating)",
                "baseline": "TRL GRPOTrainer, identical recipe",
                "baseline_value": f"{trl:.4f}",
                "ours_value": f"{ours:.4f}",
                "unit": "s/step",
                "ratio": round(ratio, 2),
                "note": f"ratio of the medians; per-run ratios {each}",
            }
        )
    if rows:
        write_rows("trainer_vs_trl", rows)
    return summary


if __name__ == "__main__":
    sys.exit(main())
