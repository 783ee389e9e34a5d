"""scripts/gpu_check.sh, shortened to a CPU run, so that the GPU check cannot rot between GPUs."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
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
    check = subprocess.Popen(
        [str(SCRIPT), *args, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PYTHON": sys.executable, "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"},
    )
    try:
        output, _ = check.communicate(timeout=600)
    except subprocess.TimeoutExpired:  # SIGTERM first: the check then kills its stages' process groups
        check.terminate()
        output, _ = check.communicate(timeout=60)
        pytest.fail(f"the GPU check ran over 600 s: {output[-2000:]}")
    rows = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else []
    return check.returncode, rows, output


@pytest.mark.slow
@pytest.mark.integration  # trainings and a service, each in its own process
def test_the_quick_cpu_run_passes_every_stage_and_writes_the_table(tmp_path: Path) -> None:
    from rewardhub.models import kit

    if kit.installed_manifest("smollm2-135m-instruct") is None:  # .ci/run installs it
        message = "smollm2-135m-instruct is not installed: run `rewardhub models install smollm2-135m-instruct`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    code, rows, output = run("--device", "cpu", "--quick", out=tmp_path)
    assert code == 0, output[-3000:]
    checks = [row["check"] for row in rows]
    assert checks == [
        "environment",
        "model verifier + rollout tests (gpu-marked)",
        "real-model tests (model kit)",
        "SmolLM2 recipe, vLLM rollouts, sleep/wake",
        "rm_throughput",
        "toy trainer, lean decoder rollouts",
    ]  # the transformers-rollout run is the full plan's only
    tests, real, recipe, bench, lean = rows[1:]
    assert tests["numbers"]["failures"] == tests["numbers"]["errors"] == 0
    assert tests["numbers"]["tests"] - tests["numbers"]["skipped"] >= 15  # the device tests ran, on the CPU
    installed = real["numbers"]["models"]
    assert real["numbers"]["failures"] == real["numbers"]["errors"] == 0
    assert real["numbers"]["tests"] - real["numbers"]["skipped"] == sum(installed.values())  # one verdict each
    assert recipe["ok"] and recipe["result"] == "config ok (no engine on this device)"  # no sleep mode on a CPU
    assert bench["numbers"]["pair_order_agreement"] == 1.0 and bench["numbers"]["max_abs_diff"] < 1e-4
    assert bench["numbers"]["service_sps"] > 0 and bench["numbers"]["baseline_sps"] > 0
    assert lean["numbers"]["steps"] == 3 and lean["numbers"]["median_step_s"] > 0
    assert lean["numbers"]["mismatch_kl_max"] < 1e-6  # float32 on the CPU: round-off only
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


def test_the_real_model_tier_runs_the_files_whose_kit_model_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu_check = load_module()
    asked: list[list[str]] = []

    def pytest_row(plan, name, label, args, limit, detail):  # noqa: ANN001, ANN202
        asked.append(args)
        return gpu_check.Row(name, plan.device, True, "ran", detail)

    monkeypatch.setattr(gpu_check, "pytest_row", pytest_row)
    monkeypatch.setattr(gpu_check, "installed_models", lambda: {"gemma3-270m": False, "smollm2-135m-instruct": True})
    parse = argparse.Namespace
    plan = gpu_check.Plan.from_args(parse(device="cuda", quick=False, out=str(tmp_path), budget_s=60.0, steps=1))
    row = gpu_check.check_real_models(plan, gpu_check.Budget(60.0))
    assert [Path(a).relative_to(ROOT).as_posix() for a in asked[0]] == [
        "tests/models/test_real_models.py",
        "tests/models/test_vllm_real.py",
        "tests/trainer/test_real_model_vllm.py",
    ]
    assert row.ok and row.detail == "not installed, skipped: gemma3-270m"
    quick = gpu_check.Plan.from_args(parse(device="cpu", quick=True, out=str(tmp_path), budget_s=60.0, steps=1))
    gpu_check.check_real_models(quick, gpu_check.Budget(60.0))
    assert asked[1][:2] == ["-k", gpu_check.QUICK_REAL_MODEL_TESTS] and len(asked[1]) == 3  # no vLLM engine
    monkeypatch.setattr(gpu_check, "installed_models", lambda: {"gemma3-270m": False, "smollm2-135m-instruct": False})
    row = gpu_check.check_real_models(plan, gpu_check.Budget(60.0))
    assert not row.ok and row.result == "no kit model installed" and "WHEELHOUSE" in row.detail


def test_the_recipe_row_counts_the_engines_sleeps_and_bounds_the_mismatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a CUDA run of the SmolLM2 recipe would report, from its log and metrics (no GPU here)."""
    gpu_check = load_module()
    monkeypatch.setattr(gpu_check, "installed_models", lambda: {"smollm2-135m-instruct": True, "gemma3-270m": True})
    monkeypatch.setattr(gpu_check.importlib.util, "find_spec", lambda name: object())  # vLLM "installed"
    sleeps = {"count": 4, "kl": 0.002}

    def run_logged(command, log, timeout_s, env=None):  # noqa: ANN001, ANN202
        assert "rollout.sleep_between_steps=true" in command and "device=cuda" in command
        run_dir = Path(next(c for c in command if c.startswith("output_dir=")).split("=", 1)[1])
        run_dir.mkdir(parents=True, exist_ok=True)
        rows = [{"time/step_s": 2.0, "rollout/mismatch_kl": sleeps["kl"], "reward/mean": 0.2}] * 4
        (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("INFO Sleep mode freed 0.31 GiB memory, 1.02 GiB memory is still in use.\n" * sleeps["count"])
        return 0

    monkeypatch.setattr(gpu_check, "run_logged", run_logged)
    plan = gpu_check.Plan.from_args(
        argparse.Namespace(device="cuda", quick=False, out=str(tmp_path), budget_s=600.0, steps=1)
    )
    row = gpu_check.check_smollm2_trainer(plan, gpu_check.Budget(600.0))
    assert row.ok and row.numbers["sleeps"] == 4 and row.numbers["steps"] == 4
    sleeps["count"] = 0  # the engine never slept: sleep mode did not take
    assert not gpu_check.check_smollm2_trainer(plan, gpu_check.Budget(600.0)).ok
    sleeps.update(count=4, kl=0.9)  # woken with stale or wrong weights: the engine samples another policy
    assert not gpu_check.check_smollm2_trainer(plan, gpu_check.Budget(600.0)).ok


def test_without_a_gpu_the_recipe_row_checks_its_config_and_fails_on_one_that_does_not_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu_check = load_module()
    monkeypatch.setattr(gpu_check, "installed_models", lambda: {"smollm2-135m-instruct": True, "gemma3-270m": True})
    plan = gpu_check.Plan.from_args(
        argparse.Namespace(device="cpu", quick=True, out=str(tmp_path), budget_s=60.0, steps=1)
    )
    assert gpu_check.check_smollm2_trainer(plan, gpu_check.Budget(60.0)).ok
    renamed = tmp_path / "recipe.yaml"
    renamed.write_text(gpu_check.SMOLLM2_CONFIG.read_text().replace("max_new_tokens:", "max_new_tokenz:"))
    monkeypatch.setattr(gpu_check, "SMOLLM2_CONFIG", renamed)  # a key the trainer no longer knows
    row = gpu_check.check_smollm2_trainer(plan, gpu_check.Budget(60.0))
    assert not row.ok and row.result == "the recipe's config does not load"


def test_a_stage_past_its_time_is_killed_with_every_process_it_started(tmp_path: Path) -> None:
    """A stage's pytest starts services and engines: when its time runs out, its whole process
    group goes, not only the process the check started (which left a stage's children running)."""
    gpu_check = load_module()
    pid_file = tmp_path / "grandchild.pid"
    stage = [sys.executable, "-c", f"import subprocess, time\np = subprocess.Popen(['sleep', '300'])\n"
             f"open({str(pid_file)!r}, 'w').write(str(p.pid))\ntime.sleep(300)"]  # fmt: skip
    assert gpu_check.run_logged(stage, tmp_path / "stage.log", timeout_s=3.0) is None
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 10.0  # SIGKILL is delivered at once, but a process takes a moment to die
    while running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    if running(grandchild):
        os.kill(grandchild, 9)
        pytest.fail("the stage's child outlived the stage's timeout")
    assert "killed after 3 s" in (tmp_path / "stage.log").read_text()


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
