"""Fixtures of the contract tests: an upstream folder on ``sys.path`` and a real ``rewardhub serve``."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from rewardhub.launcher import ServiceProcess


@pytest.fixture(scope="module")
def on_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """Puts a module's ``UPSTREAM`` folder first on ``sys.path`` for that module's tests.

    Afterwards the folder moves to the end of the path rather than leaving it: modules already
    imported from it (Ray's exit hooks) still import lazily, and the next module's folder wins.
    """
    folder = str(request.module.UPSTREAM())
    sys.path.insert(0, folder)
    yield
    sys.path.remove(folder)
    sys.path.append(folder)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``rewardhub serve`` child process; ``/get_reward`` scores with ``exact``."""
    config = tmp_path_factory.mktemp("serve") / "rewardhub.yaml"
    config.write_text("get_reward_verifier: exact\nsample_timeout_s: 10\n")
    with ServiceProcess(workers=2, config_file=str(config)) as url:
        yield url
