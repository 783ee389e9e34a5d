"""scripts/gpu_check.sh, shortened to a CPU run, so that the GPU check cannot rot between GPUs."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"


def load_module():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def run(*args: str, out: Path) -> tuple[int, list[dict], str]:
    done = subprocess.run(
        [str(SCRIPT), *args, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHON": sys.executable, "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"},
    )
    rows = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else []
    return done.returncode, rows, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.integration  # trainings and a service, each in its own process
def test_the_quick_cpu_run_passes_every_stage_and_writes_the_table(tmp_path: Path) -> None:
    code, rows, output = run("--device", "cpu", "--quick", out=tmp_path)
    assert code == 0, output[-3000:]
    checks = [row["check"] for row in rows]
    assert checks == [
        "environment",
        "model verifier + rollout tests (gpu-marked)",
        "rm_throughput",
        "toy trainer, lean decoder rollouts",
        "toy trainer, transformers rollouts",
    ]
    tests, bench, lean, hf = rows[1:]
    assert tests["numbers"]["failures"] == tests["numbers"]["errors"] == 0
    assert tests["numbers"]["tests"] - tests["numbers"]["skipped"] >= 15  # the device tests ran, on the CPU
    assert bench["numbers"]["pair_order_agreement"] == 1.0 and bench["numbers"]["max_abs_diff"] < 1e-4
    assert bench["numbers"]["service_sps"] > 0 and bench["numbers"]["baseline_sps"] > 0
    for trainer in (lean, hf):
        assert trainer["numbers"]["steps"] == 3 and trainer["numbers"]["median_step_s"] > 0
        assert trainer["numbers"]["mismatch_kl_max"] < 1e-6  # float32 on the CPU: round-off only
    table = (tmp_path / "summary.md").read_text()
    assert table.startswith("# GPU check (quick, device cpu") and table in output
    assert (tmp_path / "logs" / "rm_throughput.log").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the report of a machine without CUDA")
def test_asking_for_a_gpu_without_one_fails_clearly_and_still_writes_the_table(tmp_path: Path) -> None:
    code, rows, output = run("--device", "cuda", out=tmp_path)
    assert code == 1
    assert [(row["check"], row["ok"]) for row in rows] == [("environment", False)]
    assert "no CUDA device" in rows[0]["result"]
    assert "| environment | cuda | NO |" in (tmp_path / "summary.md").read_text()


def test_trainer_rows_on_the_gpu_get_their_speed_up_over_the_cpu_run() -> None:
    gpu_check = load_module()
    Row = gpu_check.Row
    rows = [
        Row("toy trainer, lean decoder rollouts", "cuda", True, "0.100 s/step", numbers={"median_step_s": 0.1}),
        Row("toy trainer, transformers rollouts", "cuda", True, "0.200 s/step", numbers={"median_step_s": 0.2}),
        Row("toy trainer, transformers rollouts", "cuda", False, "exit 1"),
        Row("toy trainer, lean decoder rollouts", "cpu", True, "0.300 s/step", numbers={"median_step_s": 0.3}),
    ]
    gpu_check.speedups(rows)
    assert rows[0].numbers["speedup_vs_cpu"] == pytest.approx(3.0)
    assert rows[1].numbers["speedup_vs_cpu"] == pytest.approx(1.5)  # against the only CPU run there is
    assert "speedup_vs_cpu" not in rows[2].numbers and "speedup_vs_cpu" not in rows[3].numbers
    assert rows[0].result.endswith("3.00x the CPU run")


def test_the_budget_never_gives_a_stage_more_than_is_left() -> None:
    gpu_check = load_module()
    budget = gpu_check.Budget(10.0)
    assert 9.0 < budget.limit(60.0) <= 10.0
    assert budget.limit(2.0) == 2.0
    assert gpu_check.Budget(-1.0).limit(60.0) == 0.0
    shared = gpu_check.Budget(10.0, stage_limits=False)  # stages that run together share what is left
    assert 9.0 < shared.limit(2.0) <= 10.0


def test_the_full_plan_sizes_each_stage_for_a_gpu() -> None:
    gpu_check = load_module()
    parse = argparse.Namespace
    gpu = gpu_check.Plan.from_args(parse(device="cuda", quick=False, out="o", budget_s=420.0, steps=100))
    assert gpu.train_steps == 100 and gpu.train_overrides == ()
    assert gpu.bench_args[gpu.bench_args.index("--hidden") + 1] == "1024"  # real work for the GPU
    assert gpu.bench_args[gpu.bench_args.index("--samples") + 1] == "1024"
    quick = gpu_check.Plan.from_args(parse(device="cpu", quick=True, out="o", budget_s=420.0, steps=100))
    assert quick.train_steps == 3 and "--repeats" in quick.bench_args
    assert "reward.embedded_in=thread" in quick.train_overrides  # no service process to start per quick run
