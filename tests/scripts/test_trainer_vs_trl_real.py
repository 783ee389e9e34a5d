"""bench/trainer_vs_trl_real.py runs one recipe on both sides: each side's configuration, read back, says the same.

Nothing here trains or loads a model: the two configuration objects are built and compared.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("trl")
pytest.importorskip("peft")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    saved = list(sys.path)  # the bench puts bench/ on the path to import _common; undone after the module
    spec = importlib.util.spec_from_file_location("trainer_vs_trl_real", ROOT / "bench" / "trainer_vs_trl_real.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass reads its annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    sys.path[:] = saved
    del sys.modules[spec.name]


def test_both_sides_read_back_the_same_recipe(bench) -> None:
    recipe = bench.check_same_recipe(bench.Recipe())

    assert recipe["batch"] == "8 prompts x 4 completions, 12 new tokens"
    assert recipe["sampling"] == "temperature 0.7, top-p 1.0, top-k off"
    assert recipe["learning rate"] == "0.0003, constant, warm-up 0"
    assert recipe["clipping"] == "grad norm 1.0; ratio 0.2 / 0.28"
    assert recipe["advantage"] == "(r - group mean) / (group std + 0.0001)"
    assert recipe["loss"] == "ppo_clip, token mean over the batch"
    assert recipe["regularisers"] == "KL 0.0, reference model no, entropy bonus 0.0"
    assert recipe["updates"] == "1 optimizer step per batch"


def test_the_recipe_is_the_examples(bench) -> None:
    example = yaml.safe_load((ROOT / "examples" / "smollm2_addition.yaml").read_text())
    r = bench.Recipe()
    lora = example["model"]["lora"]
    rollout = example["rollout"]

    assert example["model"]["path"] == bench.MODEL
    assert (lora["rank"], lora["alpha"], tuple(lora["target_modules"])) == (r.lora_rank, r.lora_alpha, r.lora_targets)
    assert (rollout["prompts_per_step"], rollout["group_size"]) == (r.prompts_per_step, r.group_size)
    assert (rollout["max_new_tokens"], rollout["temperature"]) == (r.max_new_tokens, r.temperature)
    assert (rollout["engine"], rollout["dtype"]) == ("vllm", "bfloat16")
    assert example["optim"]["lr"] == r.lr
    assert example["algorithm"]["mismatch"]["tis_cap"] == r.tis_cap
    assert example["data"]["max_prompt_tokens"] == bench.MAX_PROMPT_TOKENS


@pytest.mark.parametrize(
    ("field", "value", "setting"),
    [
        ("num_generations", 8, "batch"),
        ("max_completion_length", 16, "batch"),
        ("top_p", 0.9, "sampling"),
        ("learning_rate", 1e-4, "learning rate"),
        ("warmup_steps", 2, "learning rate"),
        ("adam_beta2", 0.99, "optimizer"),
        ("weight_decay", 0.1, "optimizer"),
        ("max_grad_norm", 0.5, "clipping"),
        ("epsilon_high", 0.2, "clipping"),
        ("scale_rewards", "batch", "advantage"),
        ("loss_type", "grpo", "loss"),
        ("beta", 0.04, "regularisers"),
        ("entropy_coef", 0.01, "regularisers"),
        ("num_iterations", 2, "updates"),
        ("mask_truncated_completions", True, "dropped samples"),
        ("gradient_checkpointing", True, "activation checkpointing"),
        ("max_steps", 16, "steps"),
    ],
)
def test_a_trl_setting_changed_alone_stops_the_run(bench, monkeypatch, field: str, value: Any, setting: str) -> None:
    build = bench.trl_config

    def changed(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        config, lora = build(*args, **kwargs)
        setattr(config, field, value)
        return config, lora

    monkeypatch.setattr(bench, "trl_config", changed)
    with pytest.raises(SystemExit, match=f"'{setting}'"):
        bench.check_same_recipe(bench.Recipe())


@pytest.mark.parametrize(
    ("section", "field", "value", "setting"),
    [
        ("algorithm", "std_eps", 1e-6, "advantage"),
        ("algorithm", "clip_high", 0.2, "clipping"),
        ("algorithm", "aggregation", "seq_mean_token_mean", "loss"),
        ("algorithm", "entropy_coef", 0.03, "regularisers"),
        ("optim", "schedule", "linear", "learning rate"),
        ("rollout", "top_k", 50, "sampling"),
    ],
)
def test_a_rewardhub_setting_changed_alone_stops_the_run(
    bench, monkeypatch, section: str, field: str, value: Any, setting: str
) -> None:
    build = bench.ours_config

    def changed(*args: Any, **kwargs: Any) -> Any:
        cfg = build(*args, **kwargs)
        part = getattr(cfg, section).model_copy(update={field: value})
        return cfg.model_copy(update={section: part})

    monkeypatch.setattr(bench, "ours_config", changed)
    with pytest.raises(SystemExit, match=f"'{setting}'"):
        bench.check_same_recipe(bench.Recipe())


def test_a_lora_that_differs_stops_the_run(bench, monkeypatch) -> None:
    build = bench.trl_config

    def changed(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        config, lora = build(*args, **kwargs)
        lora.target_modules = {"q_proj", "v_proj"}
        return config, lora

    monkeypatch.setattr(bench, "trl_config", changed)
    with pytest.raises(SystemExit, match="'lora'"):
        bench.check_same_recipe(bench.Recipe())


def test_a_step_is_timed_end_to_end_and_the_phases_follow_the_same_steps(bench) -> None:
    clock = bench.StepClock()
    phases = bench._PhaseClock(clock)

    class Work:
        def generate(self) -> None:
            pass

    work = Work()
    phases.wrap(work, "generate", "generate")
    clock.ends = []
    for _ in range(4):
        work.generate()
        clock.mark()

    assert len(clock.durations()) == 3  # the first step has no step before it
    assert len(phases.per_step["generate"]) == 4
    clock.ends = [0.0, 1.0, 11.0, 13.0, 16.0]
    assert clock.durations() == [1.0, 10.0, 2.0, 3.0]
    assert clock.seconds_per_step(warmup=1) == 3.0  # median of 10, 2, 3: the warm-up step left out


def test_the_lean_decoder_side_runs_the_same_recipe_generating_on_the_policy(bench, tmp_path: Path) -> None:
    recipe = bench.Recipe()
    hf = bench.ours_config(recipe, 0, 8, tmp_path, "http://127.0.0.1:1", engine="hf")
    trl = bench.trl_recipe(*bench.trl_config(recipe, 0, 8, tmp_path, vllm=False))

    assert hf.rollout.engine == "hf" and bench.ours_recipe(hf) == trl


def _run(seed: int, accuracy: float, seconds: float) -> dict[str, Any]:
    before = {"accuracy": 0.2, "correct": 13, "prompts": 64}
    after = {"accuracy": accuracy, "correct": round(64 * accuracy), "prompts": 64}
    split = {"generate": seconds / 2, "rest of the step": seconds / 2}
    return {
        "seed": seed,
        "seconds_per_step": seconds,
        "split_s": split,
        "accuracy_before": before,
        "accuracy_after": after,
        "rewards": [0.1, 0.5],
        "engine_gap": [None],
    }


def test_each_trl_side_is_timed_against_the_rewardhub_side_with_its_kind_of_engine(bench, monkeypatch) -> None:
    monkeypatch.setattr(bench, "write_rows", lambda name, rows: None)
    runs = [
        {
            "rewardhub": _run(s, 0.6, 40.0),
            "trl-vllm": _run(s, 0.4, 80.0),
            "trl": _run(s, 0.5, 30.0),
            "rewardhub-hf": _run(s, 0.5, 15.0),
        }
        for s in (0, 1)
    ]
    summary = bench.report(runs, 2, bench.engines(bench.Recipe()))

    assert summary["trl-vllm_over_rewardhub"] == 2.0  # vLLM against vLLM
    assert summary["trl_over_rewardhub-hf"] == 2.0  # generation on the policy against the same
    assert summary["accuracy_after"] == {"rewardhub": 0.6, "trl-vllm": 0.4, "trl": 0.5, "rewardhub-hf": 0.5}
