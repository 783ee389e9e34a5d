"""scripts/sample_path.py: one sample followed from ``POST /v1/score`` to its verdict, each move
between rooms told against the import graph, so a call that runs back up shows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample_path():
    spec = importlib.util.spec_from_file_location("sample_path", ROOT / "scripts" / "sample_path.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_a_code_sample_goes_down_the_house_to_its_verdict_and_never_back_up(sample_path):
    path, result = sample_path.follow("code")
    assert (result["status"], result["score"]) == ("ok", 1.0)
    entered = [callee for _, callee, _, how in path.moves if how != "read"]
    assert entered.index("rewardhub.verifiers.code") < entered.index("rewardhub.sandbox")
    # the core reaches the verifier only through the base class it declares
    assert ("rewardhub", "rewardhub.verifiers.code", "CodeVerifier.score", "interface") in path.moves
    assert [move for move in path.moves if move[3] in ("BACK UP", "across")] == []


def test_a_call_against_the_imports_is_told_as_back_up(sample_path):
    trace = sample_path.Trace(sample_path.module_files())
    here = sys._getframe()
    assert trace._how("rewardhub.verifiers.code", "rewardhub.sandbox", here) == "down"
    assert trace._how("rewardhub.sandbox", "rewardhub.verifiers.code", here) == "BACK UP"


def test_rooms_are_packages_or_rewardhubs_top_level_packages(sample_path):
    modules = sample_path.module_files()
    room = sample_path.room_of
    assert room("rewardhub.api.routes.score", modules) == "rewardhub.api.routes"
    assert room("rewardhub.api.routes.score", modules, top=True) == "rewardhub.api"
    assert room("rewardhub.verifiers.code.outcomes", modules, top=True) == "rewardhub.verifiers"
    assert room("rewardhub.scoring", modules) == room("rewardhub.types", modules) == "rewardhub"  # the core
    assert room("rewardhub.cli", modules, top=True) == "rewardhub.cli"  # the process that serves is not
