"""Fixtures of the contract tests: an upstream folder on ``sys.path`` and a real ``rewardhub serve``."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from rewardhub.launcher import ServiceProcess


@pytest.fixture(scope="module")
def on_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """Puts a module's ``UPSTREAM`` folder first on ``sys.path`` and forgets its modules afterwards."""
    folder = str(request.module.UPSTREAM())
    before = set(sys.modules)
    sys.path.insert(0, folder)
    yield
    sys.path.remove(folder)
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        if module is not None and str(getattr(module, "__file__", "") or "").startswith(folder):
            del sys.modules[name]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``rewardhub serve`` child process; ``/get_reward`` scores with ``exact``."""
    config = tmp_path_factory.mktemp("serve") / "rewardhub.yaml"
    config.write_text("get_reward_verifier: exact\nsample_timeout_s: 10\n")
    with ServiceProcess(workers=2, config_file=str(config)) as url:
        yield url
