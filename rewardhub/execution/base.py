"""What every execution engine offers the scoring pipeline."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from rewardhub.calls import Call
from rewardhub.jobs.records import JobJournal
from rewardhub.types import Result

__all__ = ["Executor", "ProgressCallback"]

ProgressCallback = Callable[[int], None]
"""Called with the number of samples just finished (for job progress)."""


class Executor(ABC):
    """Runs calls somewhere (local pools, Celery workers) and returns their results in order."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire pools, connections and models. Called once before the first run."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release everything; pending calls may be abandoned."""

    @abstractmethod
    async def run(self, calls: Sequence[Call], on_progress: ProgressCallback | None = None) -> list[list[Result]]:
        """Results of each call (one per sample of the call), never raising for one sample's fault."""

    def admit(self, n_samples: int) -> None:  # noqa: B027 - optional hook
        """Raise :class:`~rewardhub.errors.Overloaded` if ``n_samples`` more would exceed the queue bound."""

    def readiness(self) -> list[str]:
        """Reasons the engine cannot take work right now; empty when ready."""
        return []

    def queue_depth(self) -> int:
        return 0

    def job_journal(self) -> JobJournal | None:
        """Where job records outlive this process, if this engine has such a place."""
        return None
