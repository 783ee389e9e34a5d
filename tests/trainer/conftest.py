"""Fixtures of the trainer tests: a tiny configuration, one torch thread."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from trainer_helpers import write_addition

from rewardhub.trainer.config import TrainConfig


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
