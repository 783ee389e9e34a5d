"""Run every benchmark and write the table docs/benchmarks.md links to, from their own output.

    python bench/run_all.py --data-dir DIR [--only math_throughput,overhead] [--skip trainer_vs_trl] [--quick]

Each bench runs as its own process (so one bench's imports and caches never touch another's);
its full output goes to ``bench/results/NAME.log``. Benches that report rows
(:func:`_common.write_rows`) leave ``bench/results/NAME.json``; this script turns every row into
one line of ``bench/results/TABLE.md``. No figure is typed by hand: a bench that failed, or that
reports no rows, says so in its line, with the path of its log. A bench not run this time keeps its
previous rows (and the date they were measured is in the row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, ROOT, add_data_dir  # noqa: E402

LOAD_MODES = "baseline,local,celery,fault,lost-worker"

# name -> (arguments, quick arguments, what the baseline is)
BENCHES: dict[str, tuple[list[str], list[str], str]] = {
    "math_accuracy": (["--agreement"], ["--agreement"], "math-verify as its own tests call it"),
    "math_throughput": ([], ["--rounds", "3"], "math-verify in a warm process pool of the same size"),
    "tool_call_vs_bfcl": ([], ["--rounds", "3", "--repeats", "20"], "BFCL's own AST checker (bfcl-eval)"),
    "overhead": (
        [],
        ["--rounds", "1"],
        "a bare FastAPI endpoint doing the same JSON in and out; one-sample /get_reward: the same service batched",
    ),
    "json_codecs": ([], ["--repeats", "10"], "pydantic's Rust JSON against orjson and msgspec"),
    "sandbox_speed": (
        [],
        ["--rounds", "3", "--batch-rounds", "1"],
        "a warm, unisolated pre-forked Python pool; bare toolchain processes",
    ),
    "code_verifier_speed": (
        [],
        ["--rounds", "3", "--fresh-rounds", "1"],
        "the same programs through /run_code; bare `python -c` processes; the verifier's own one-case and per-assert "
        "runs; SandboxFusion's server and verl's scorer on it, where bench/peers/setup_sandbox_fusion.sh set it up",
    ),
    "rm_throughput": (
        [],
        ["--samples", "64", "--repeats", "3"],
        "a batched transformers forward at the same batch size",
    ),
    "load": (
        ["--modes", LOAD_MODES],
        ["--modes", LOAD_MODES, "--duration", "20", "--big", "10000", "--repeat", "1"],
        "a bare FastAPI + warm math-verify process pool; lost worker: the same request without the kill",
    ),
    "reward_cache": ([], ["--steps", "100"], "the same scorer and judge without the reward cache"),
    "trainer_vs_trl": ([], ["--steps", "100", "--seeds", "0", "--window", "20"], "TRL's GRPOTrainer, identical recipe"),
    "trainer_vs_trl_real": (
        [],
        ["--steps", "2", "--seeds", "0"],
        "TRL's GRPOTrainer, identical recipe, on SmolLM2-135M-Instruct with LoRA",
    ),
    "session_speed": (
        [],
        ["--sessions", "10", "--calls", "100", "--episodes", "3"],
        "stateless /v1/sandbox/run and SandboxFusion's /run_code on the same service",
    ),
}
TAKES_DATA_DIR = {"math_accuracy", "math_throughput", "overhead", "json_codecs"}


def run(name: str, args: list[str], data_dir: Path) -> tuple[int, float]:
    command = [sys.executable, str(ROOT / "bench" / f"{name}.py"), *args]
    if name in TAKES_DATA_DIR:
        command += ["--data-dir", str(data_dir)]
    started = time.perf_counter()
    with open(RESULTS / f"{name}.log", "w") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        code = subprocess.call(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    return code, time.perf_counter() - started


def table(status: dict[str, str]) -> str:
    lines = [
        "| bench | case | baseline | baseline | rewardhub | unit | ratio | note |",
        "| --- | --- | --- | ---: | ---: | --- | ---: | --- |",
    ]
    for name in BENCHES:
        path = RESULTS / f"{name}.json"
        rows = json.loads(path.read_text()) if path.exists() else []
        if not rows:
            log = RESULTS / f"{name}.log"
            what = status.get(name, "ran earlier" if log.exists() else "not run")
            what = f"{what}, reports no rows (its numbers are in its log)" if what == "ran" or log.exists() else what
            lines.append(f"| `{name}` | {what}: bench/results/{name}.log | {BENCHES[name][2]} | | | | | |")
            continue
        for row in rows:
            ratio = f"{row['ratio']:.2f}x" if isinstance(row.get("ratio"), int | float) else ""
            lines.append(
                f"| `{name}` | {row['case']} | {row['baseline']} | {row['baseline_value']} | {row['ours_value']} "
                f"| {row['unit']} | {ratio} | {row.get('note', '')} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_dir(parser)
    parser.add_argument("--only", default="", help="comma-separated benches to run (default: all)")
    parser.add_argument("--skip", default="", help="comma-separated benches to leave out")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and shorter runs")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    chosen = [n for n in (args.only.split(",") if args.only else BENCHES) if n and n not in args.skip.split(",")]
    status: dict[str, str] = {}
    for name in chosen:
        full, quick, _ = BENCHES[name]
        stale = RESULTS / f"{name}.json"
        stale.unlink(missing_ok=True)  # a bench that fails must not leave old rows looking current
        code, seconds = run(name, quick if args.quick else full, args.data_dir)
        status[name] = "ran" if code == 0 else f"FAILED (exit code {code})"
        print(f"{name:<16} {status[name]:<24} {seconds:7.0f} s   bench/results/{name}.log", flush=True)
    text = table(status)
    header = f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores by `python bench/run_all.py`.\n\n"
    (RESULTS / "TABLE.md").write_text(header + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
