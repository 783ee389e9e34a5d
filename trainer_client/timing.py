"""Where a step's wall-clock time goes: the ``time/*`` metrics and ``reward/latency_s``."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["StepTiming"]

Phase = Literal["publish", "generate", "reward", "train"]


@dataclass
class StepTiming:
    """Seconds one step spent generating, waiting for rewards and training (frozen log-probs included).

    ``latency`` is the service's round trip, from the first request sent to the last answer back;
    most of it hides behind generation and training, which is why it is not a phase. ``step`` is
    the whole step, collection to update.
    """

    publish: float = 0.0  # writing the policy's weights for the service (reward.dense's $policy)
    generate: float = 0.0
    reward: float = 0.0
    train: float = 0.0
    latency: float = 0.0
    step: float = 0.0

    @contextlib.contextmanager
    def phase(self, name: Phase) -> Iterator[None]:
        """Add the time spent inside the block to ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, name, getattr(self, name) + time.perf_counter() - start)
