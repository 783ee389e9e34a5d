"""In-process stand-ins for the reward service, for tests about the trainer's arithmetic rather
than the HTTP path (tests/trainer/test_end_to_end.py covers that, against the real service).

A module with a unique name (not conftest) so test files can import it unambiguously.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from rewardhub.types import Result, Sample


class ExactScorer:
    """Score 1 when the response equals the reference; ``fail`` marks samples it cannot judge."""

    def __init__(self, fail: Callable[[Sample], bool] | None = None) -> None:
        self.fail = fail
        self.seen: list[Sample] = []

    async def score(self, samples, verifier=None):
        self.seen.extend(samples)
        out = []
        for s in samples:
            if self.fail is not None and self.fail(s):
                out.append(Result.failed("verifier crashed"))
            else:
                out.append(Result.ok(1.0 if s.response.strip() == str(s.reference) else 0.0))
        return out


def scorer_factory(scorer):
    @contextlib.asynccontextmanager
    async def factory():
        yield scorer

    return factory


def write_addition(path: Path, pairs) -> str:
    path.write_text("".join(json.dumps({"prompt": f"{a}+{b}=", "reference": str(a + b)}) + "\n" for a, b in pairs))
    return str(path)


class BrokenScorer:
    """A scorer factory that fails to open (picklable: a class the reward process can import)."""

    def __init__(self) -> None:
        raise ValueError("this scorer cannot open")


class StalledScorer:
    """A picklable scorer factory whose requests never finish (an async context manager of itself)."""

    async def __aenter__(self) -> StalledScorer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def score(self, samples, verifier=None):
        await asyncio.sleep(3600)


class VanishingScorer:
    """A picklable scorer factory whose process dies while opening it."""

    def __init__(self) -> None:
        os._exit(3)
