"""The device the rollout's ``gpu`` tests run on."""

from __future__ import annotations

import os

import pytest
import torch


@pytest.fixture(scope="session")
def device() -> str:
    """REWARDHUB_TEST_DEVICE (default ``cuda``; ``cpu`` runs the same checks without a GPU, which is
    how scripts/gpu_check.py keeps them from rotting)."""
    name = os.environ.get("REWARDHUB_TEST_DEVICE", "cuda")
    if name.startswith("cuda") and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (or REWARDHUB_TEST_DEVICE=cpu)")
    return name
