"""TRL's ``GRPOTrainer`` runs the guide's snippet for two steps, with the sync and the async reward
function, on the oldest TRL that pyproject allows and on the newest release.

Each version runs in its own Python process with that release first on the path (installed
without dependencies: both use this environment's transformers, accelerate and datasets).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from contract_support import REPO, doc_block, installed

OLDEST = "0.29.1"  # pyproject's floor: the dev extra says trl>=0.29.1
NEWEST = "1.16.0"
HERE = Path(__file__).parent


def test_pyproject_floor_is_the_oldest_version_tested() -> None:
    assert f'"trl>={OLDEST}"' in (REPO / "pyproject.toml").read_text()


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_grpo_trainer_trains_two_steps_with_the_guides_reward_functions(
    version: str, served: str, tmp_path: Path
) -> None:
    folder = installed(
        f"trl-{version}", [f"trl=={version}", "requests==2.34.2", "urllib3==2.8.0", "charset-normalizer==3.5.3"]
    )
    snippet = tmp_path / "snippet.py"
    snippet.write_text(doc_block("trl"))
    env = {**os.environ, "REWARDHUB_URL": served, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}
    run = subprocess.run(
        [sys.executable, str(HERE / "trl_snippet_run.py"), str(snippet), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["version"] == version
    assert report["file"].startswith(str(folder))
    steps = [entry for entry in report["log_history"] if "rewards/rewardhub_math/mean" in entry]
    assert len(steps) == 2  # both steps were rewarded
    for entry in steps:
        for name in ("rewardhub_math", "rewardhub_format"):  # the sync and the async function
            assert math.isfinite(entry[f"rewards/{name}/mean"])  # None everywhere would log NaN
            if version != OLDEST:  # TRL hands reward functions log_metric from 1.0 on
                assert entry[f"{name}/status/ok"] == 1.0  # every completion was judged by the service


# --- a completion the service could not judge, through GRPOTrainer's own reward and advantage code ---

# One GRPO batch of two groups of three (the rows TRL's sampler would draw). Group "1+1=": two judged
# completions (right, wrong) and one whose row has no solution, which ``exact`` cannot judge; group
# "2+2=": no solution at all. The completions come from a rollout_func (TRL's own hook for custom
# generation) so that the rewards are known; everything after generation is TRL's.
ROWS = [("1+1=", "2", "2"), ("1+1=", "2", "3"), ("1+1=", None, "2"), ("2+2=", None, "4"), ("2+2=", None, "5"), ("2+2=", None, "4")]  # fmt: skip


def test_grpo_keeps_an_unjudged_completion_out_of_the_baseline_with_advantage_zero(served: str, tmp_path: Path) -> None:
    """The installed TRL (the dev extra's, >= 1.6) in this process: ``reward_func`` returns None for
    the unjudged rows, TRL's ``_calculate_rewards`` makes them NaN, and its advantage code leaves
    them out of the group mean and std and gives them advantage 0."""
    import torch
    import trl
    from datasets import Dataset
    from packaging.version import Version
    from trl import GRPOConfig, GRPOTrainer
    from trl_snippet_run import tiny_model

    from rewardhub.integrations.trl import reward_func

    assert Version(trl.__version__) >= Version("1.6")  # the release that keeps all-None rows out of the baseline
    rows = [{"prompt": prompt, "solution": solution} for prompt, solution, _ in ROWS]
    texts = iter([completion for _, _, completion in ROWS])

    def rollout(prompts: list[str], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        ids = [tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id] for text in [next(texts) for _ in prompts]]  # fmt: skip
        prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        return {"prompt_ids": prompt_ids, "completion_ids": ids, "logprobs": None}

    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=6,
        num_generations=3,
        max_completion_length=4,
        beta=0.0,
        report_to="none",
        use_cpu=True,
        bf16=False,
        disable_tqdm=True,
        seed=0,
    )
    function = reward_func("exact", served)
    trainer = GRPOTrainer(
        model=tiny_model(tmp_path),
        args=config,
        train_dataset=Dataset.from_list(rows),
        reward_funcs=[function],
        rollout_func=rollout,
    )
    trainer.model.train()
    batch = trainer._generate_and_score_completions(rows)

    advantages = batch["advantages"].tolist()
    # group 1: the judged rewards are [1, 0]: mean 0.5, unbiased std sqrt(0.5); TRL divides by std + 1e-4
    expected = 0.5 / (0.5**0.5 + 1e-4)
    assert advantages[:2] == pytest.approx([expected, -expected], rel=1e-5)
    assert advantages[2:] == [0.0, 0.0, 0.0, 0.0]  # unjudged: no learning signal, not a wrong answer
    metrics = trainer._metrics["train"]
    assert metrics["rewards/rewardhub_exact/mean"][-1] == pytest.approx(0.5)  # NaN rows are not averaged in
    assert metrics["rewardhub_exact/status/error"][-1] == pytest.approx(4 / 6)  # logged through log_metric
    assert not torch.isnan(batch["advantages"]).any()
