"""Fixtures of the contract tests: an upstream folder on ``sys.path`` and a real ``rewardhub serve``."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardhub.launcher import ServiceProcess


@pytest.fixture(scope="module")
def on_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """Puts a module's ``UPSTREAM`` folder first on ``sys.path`` for that module's tests only.

    The folder may hold other versions of packages this environment has (verl's Hydra needs
    antlr4 4.9, math-verify needs 4.13): those are set aside while the folder is in use and come
    back afterwards. Modules only the folder has stay imported, so Ray's exit hooks still run.
    """
    folder = Path(request.module.UPSTREAM())
    shadowed = {name for name in _top_level_names(folder) if importlib.util.find_spec(name) is not None}
    saved = {key: module for key, module in sys.modules.items() if key.partition(".")[0] in shadowed}
    for key in saved:
        del sys.modules[key]
    sys.path.insert(0, str(folder))
    yield
    sys.path.remove(str(folder))
    for key in [key for key in sys.modules if key.partition(".")[0] in shadowed]:
        del sys.modules[key]
    sys.modules.update(saved)


def _top_level_names(folder: Path) -> set[str]:
    names = {path.stem for path in folder.glob("*.py")}
    names |= {path.name for path in folder.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    return names


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``rewardhub serve`` child process; ``/get_reward`` scores with ``exact``."""
    config = tmp_path_factory.mktemp("serve") / "rewardhub.yaml"
    config.write_text("get_reward_verifier: exact\nsample_timeout_s: 10\n")
    with ServiceProcess(workers=2, config_file=str(config)) as url:
        yield url
