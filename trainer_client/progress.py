"""What the terminal shows: a rich progress bar with the headline numbers of the last step.

On a terminal it is a live bar; elsewhere (CI logs, pipes) it prints one line every
``every`` steps, so a log still shows the run's course without a line per step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["StepReporter", "headline"]

_HEADLINE = (
    ("reward", "reward/mean"),
    ("entropy", "actor/entropy"),
    ("len", "response/length_mean"),
    ("eval", "eval/reward_mean"),
    ("s/step", "time/step_s"),
)


def headline(row: Mapping[str, Any]) -> str:
    parts = [f"{label} {row[key]:.3f}" for label, key in _HEADLINE if isinstance(row.get(key), int | float)]
    return f"step {row.get('step')}: " + "  ".join(parts)


class StepReporter:
    def __init__(
        self, total: int, start: int = 0, enabled: bool = True, console: Console | None = None, every: int = 10
    ) -> None:
        self.console = console or Console()
        self.enabled = enabled
        self.every = every
        self._progress: Progress | None = None
        if enabled and self.console.is_terminal:
            self._progress = Progress(
                TextColumn("[bold]rewardhub-train"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
            )
            self._task = self._progress.add_task("", total=total, completed=start)
            self._progress.start()

    def update(self, row: Mapping[str, Any]) -> None:
        if not self.enabled:
            return
        if self._progress is not None:
            self._progress.update(self._task, completed=int(row["step"]), description=headline(row).split(": ", 1)[-1])
        elif int(row["step"]) % self.every == 0:
            self.console.print(headline(row), highlight=False)

    def note(self, text: str) -> None:
        if self.enabled:
            self.console.print(text, highlight=False)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
