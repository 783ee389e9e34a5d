"""Fixtures of the model-verifier tests: tiny local models, a fake judge endpoint, the device; offline."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Models come from local folders only (tiny ones built here, real ones from the model kit): a
# missing file must fail, never turn into a download from a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).parent))

from rm_fake_judge import FakeJudge  # noqa: E402
from rm_tiny import build_models  # noqa: E402


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build_models(tmp_path_factory.mktemp("tiny_models"))


@pytest.fixture(scope="session")
def sharp_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The same tiny models with outputs that differ by far more than bfloat16 round-off."""
    return build_models(tmp_path_factory.mktemp("sharp_models"), initializer_range=0.3)


@pytest.fixture(scope="session")
def device() -> str:
    """Where the ``gpu`` tests run: REWARDHUB_TEST_DEVICE (default ``cuda``; ``cpu`` runs the same
    checks without a GPU, which is how scripts/gpu_check.py keeps them from rotting)."""
    import torch

    name = os.environ.get("REWARDHUB_TEST_DEVICE", "cuda")
    if name.startswith("cuda") and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (or REWARDHUB_TEST_DEVICE=cpu)")
    return name


@pytest.fixture(scope="session")
def _judge_server() -> Iterator[FakeJudge]:
    server = FakeJudge()
    yield server
    server.close()


@pytest.fixture
def fake_judge(_judge_server: FakeJudge) -> FakeJudge:
    """The endpoint, reset: answers "True" until a test sets ``responder``."""
    _judge_server.reset(lambda body: "True")
    return _judge_server
