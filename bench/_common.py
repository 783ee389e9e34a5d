"""What every benchmark shares: where the data is, how sides alternate, and where rows go.

Each bench runs both sides in alternating rounds (ours, baseline, ours, baseline, ...) so that a
noisy neighbour on a shared machine penalises both alike, reports medians, and hands its headline
numbers to :func:`write_rows`; ``bench/run_all.py`` turns those rows into the benchmark table.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

__all__ = [
    "ROOT",
    "RESULTS",
    "StepClock",
    "add_data_dir",
    "alternate",
    "clock_rewardhub_steps",
    "data_file",
    "median",
    "run_fresh",
    "trl_step_callback",
    "write_rows",
]


def add_data_dir(parser: Any) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("REWARDHUB_DATA_DIR", ROOT / "tests" / "data")),
        help="folder holding the data files (default: $REWARDHUB_DATA_DIR, else tests/data of this repository)",
    )


def data_file(data_dir: Path, name: str) -> Path:
    path = data_dir / name
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --data-dir (or set REWARDHUB_DATA_DIR) to the folder holding {name}")
    return path


def alternate(sides: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each side once per round, in alternating order (round 2 runs them backwards)."""
    names = list(sides)
    values: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            values[name].append(sides[name]())
    return values


def median(values: list[float]) -> float:
    return statistics.median(values)


def write_rows(bench: str, rows: list[dict[str, Any]]) -> Path:
    """Rows of ``{"bench", "case", "baseline", "ours", "baseline_value", "ours_value", "unit", "ratio", "note"}``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{bench}.json"
    path.write_text(json.dumps([{"bench": bench, **row} for row in rows], indent=1))
    return path


class StepClock:
    """When each optimizer step ended; a step lasts from the end of the one before to its own end.

    The trainers' benches time both sides with this one clock: TRL's ``on_step_end`` callback
    (:func:`trl_step_callback`) and rewardhub's ``Trainer.train_step`` (:func:`clock_rewardhub_steps`)
    mark it when their optimizer step is done, so the first step (set-up, first calls) is never timed.
    """

    def __init__(self) -> None:
        self.ends: list[float] = []

    def mark(self) -> None:
        self.ends.append(time.perf_counter())

    def durations(self) -> list[float]:
        return [b - a for a, b in zip(self.ends, self.ends[1:], strict=False)]

    def seconds_per_step(self, warmup: int) -> float:
        """The median step after ``warmup`` timed steps (all of them when there are no more)."""
        durations = self.durations()
        return statistics.median(durations[warmup:] or durations)


def trl_step_callback(clock: StepClock) -> Any:
    """A ``transformers.TrainerCallback`` that marks ``clock`` at the end of each optimizer step."""
    from transformers import TrainerCallback

    class _StepEnd(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN202 - TrainerCallback's signature
            clock.mark()

    return _StepEnd()


def clock_rewardhub_steps(trainer: Any, clock: StepClock) -> None:
    """Mark ``clock`` when each of ``trainer``'s (a ``rewardhub.trainer.Trainer``) steps is done."""
    step = trainer.train_step

    def timed_step(channel: Any) -> Any:
        row = step(channel)
        clock.mark()
        return row

    trainer.train_step = timed_step


def run_fresh(script: str | Path, args: list[str], out: Path) -> Any:
    """Run ``script`` with ``args`` in a fresh interpreter (so a run inherits no other run's threads,
    caches or garbage) and return the JSON it wrote to ``out``."""
    subprocess.run([sys.executable, str(script), *args, "--json", str(out)], check=True)
    return json.loads(Path(out).read_text())
