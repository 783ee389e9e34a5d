"""Shared pieces of the trainer tests: tiny configs and an in-process scorer.

The scorer stands in for the service where a test is about the trainer's arithmetic, not the
HTTP path (tests/trainer_client/test_end_to_end.py covers that, against the real service).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from rewardhub.types import Result, Sample
from trainer_client.config import TrainConfig


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


@pytest.fixture
def make_config(tmp_path) -> Callable[..., TrainConfig]:
    """A tiny, fast configuration; keyword arguments are merged into it section by section."""
    train = write_addition(tmp_path / "train.jsonl", [(a, b) for a in range(4) for b in range(4)])
    held_out = write_addition(tmp_path / "eval.jsonl", [(5, 4), (6, 2)])

    def make(**sections) -> TrainConfig:
        raw = {
            "output_dir": str(tmp_path / "run"),
            "steps": 2,
            "seed": 0,
            "model": {"toy": {"hidden_size": 32, "intermediate_size": 64, "num_layers": 1, "num_heads": 2}},
            "data": {"train": train, "eval": held_out},
            "rollout": {"prompts_per_step": 4, "group_size": 4, "max_new_tokens": 4},
            "optim": {"lr": 1e-3},
            "eval": {"samples_per_prompt": 2},
            "logging": {"progress": False},
        }
        for key, value in sections.items():
            if isinstance(value, dict) and isinstance(raw.get(key), dict):
                raw[key] = {**raw[key], **value}
            else:
                raw[key] = value
        return TrainConfig.model_validate(raw)

    return make


@pytest.fixture(autouse=True)
def _one_thread():
    """Tests are small; one thread keeps them fast and comparable on a 2-core runner."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
