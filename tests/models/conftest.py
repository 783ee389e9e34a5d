"""Fixtures of the model-verifier tests: tiny local models and a fake judge endpoint."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rm_fake_judge import FakeJudge  # noqa: E402
from rm_tiny import build_models  # noqa: E402


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build_models(tmp_path_factory.mktemp("tiny_models"))


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
