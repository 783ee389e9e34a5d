"""bench/run_all.py's table: one line per row a bench wrote, and a line that says so for a bench without rows."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_all(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setattr(sys, "path", list(sys.path))  # run_all puts bench/ on the path; undone after the test
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench" / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    return module


def test_every_row_is_a_line_and_a_bench_without_rows_points_to_its_log(run_all, tmp_path: Path) -> None:
    row = {
        "bench": "math_throughput",
        "case": "1600 responses",
        "baseline": "math-verify, warm pool of 2",
        "baseline_value": 1817,
        "ours_value": 3764,
        "unit": "samples/s",
        "ratio": 2.07,
        "note": "verdicts agree 99.5%",
    }
    untimed = {**row, "case": "reward", "ratio": None, "note": "no ratio"}
    (tmp_path / "math_throughput.json").write_text(json.dumps([row, untimed]))
    (tmp_path / "sandbox_speed.log").write_text("its own output, no rows\n")

    lines = run_all.table({"rm_throughput": "FAILED (exit code 2)"}).splitlines()

    assert lines[0].startswith("| bench | case | baseline |") and lines[1].startswith("| --- |")
    assert len(lines) == 2 + len(run_all.BENCHES) + 1  # math_throughput has two rows, every other bench one line
    assert (
        "| `math_throughput` | 1600 responses | math-verify, warm pool of 2 | 1817 | 3764 | samples/s | 2.07x "
        "| verdicts agree 99.5% |" in lines
    )
    assert (
        "| `math_throughput` | reward | math-verify, warm pool of 2 | 1817 | 3764 | samples/s |  | no ratio |" in lines
    )
    baseline = run_all.BENCHES["sandbox_speed"][2]
    assert (
        "| `sandbox_speed` | ran earlier, reports no rows (its numbers are in its log): "
        f"bench/results/sandbox_speed.log | {baseline} | | | | | |" in lines
    )
    failed = next(line for line in lines if line.startswith("| `rm_throughput` |"))
    assert "FAILED (exit code 2): bench/results/rm_throughput.log" in failed
    never = next(line for line in lines if line.startswith("| `trainer_vs_trl` |"))
    assert "| not run: bench/results/trainer_vs_trl.log |" in never
