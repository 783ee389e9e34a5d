"""What every benchmark shares: where the data is, how sides alternate, and where rows go.

Each bench runs both sides in alternating rounds (ours, baseline, ours, baseline, ...) so that a
noisy neighbour on a shared machine penalises both alike, reports medians, and hands its headline
numbers to :func:`write_rows`; ``bench/run_all.py`` turns those rows into the benchmark table.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

__all__ = ["ROOT", "RESULTS", "add_data_dir", "alternate", "data_file", "median", "write_rows"]


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
