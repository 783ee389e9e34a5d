"""OpenRLHF, the trainer side: the reward_func file, read the way OpenRLHF 0.11 reads it.

OpenRLHF makes a tensor of every value it gets back: ``torch.as_tensor`` on each shard's lists and
``torch.cat`` across shards on its batched path; ``torch.tensor([value])`` per key on its current
single-sample path. Those two readers are in tests/openrlhf_support.py; a test
that runs OpenRLHF's own executor runs too where OpenRLHF is installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from openrlhf_support import read_single

import rewardhub.integrations.openrlhf_reward_func as reward_func_file


def test_reward_func_file_loads_the_way_openrlhf_loads_it(composite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_URL", composite_url)
    monkeypatch.delenv("REWARDHUB_VERIFIER", raising=False)
    spec = importlib.util.spec_from_file_location("reward_func", reward_func_file.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    out = module.reward_func(["Q: <think>a</think>42", "Q: 5"], ["Q: ", "Q: "], ["42", "4"])
    assert isinstance(out["rewards"], torch.Tensor) and out["rewards"].tolist() == pytest.approx([1.0, 0.0])
    assert out["extra_logs"]["component/exact"].tolist() == [1.0, 0.0]
    single = module.reward_func(["Q: 42"], ["Q: "], ["42"])  # what the single-sample executor sends
    assert read_single(single)["reward"].item() == pytest.approx(0.8)


def test_reward_func_scores_with_the_verifier_named_in_the_environment(
    composite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWARDHUB_URL", composite_url)
    monkeypatch.setenv("REWARDHUB_VERIFIER", '{"name": "exact", "config": {"case_sensitive": true}}')
    out = reward_func_file.reward_func(["Q: Paris", "Q: paris"], ["Q: ", "Q: "], ["Paris", "Paris"])
    assert out["rewards"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["status/ok"].tolist() == [1.0, 1.0]


def _openrlhf_agent() -> Any:
    """OpenRLHF's executor module, imported without its heavy ``openrlhf.utils`` package init."""
    pytest.importorskip("aiohttp")
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("OpenRLHF is not installed (pip install --no-deps openrlhf aiohttp to run this)")
    utils = types.ModuleType("openrlhf.utils")
    utils.__path__ = [str(Path(next(iter(spec.submodule_search_locations))) / "utils")]
    sys.modules.setdefault("openrlhf.utils", utils)
    from openrlhf.utils import agent

    return agent


def test_openrlhfs_own_single_turn_executor_reads_the_answer(
    composite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _openrlhf_agent()
    over_http = agent.SingleTurnAgentExecutor(f"{composite_url}/get_reward")
    [answer] = asyncio.run(over_http._fetch_rewards_via_http(["Q: <think>x</think>42"], ["Q: "], ["42"]))
    assert read_single(answer)["reward"].item() == pytest.approx(1.0)

    monkeypatch.setenv("REWARDHUB_URL", composite_url)
    monkeypatch.delenv("REWARDHUB_VERIFIER", raising=False)
    from_file = agent.SingleTurnAgentExecutor(reward_func_file.__file__)
    [answer] = asyncio.run(from_file._fetch_rewards_via_func(["Q: 41"], ["Q: "], ["42"]))
    assert read_single(answer)["reward"].item() == 0.0
