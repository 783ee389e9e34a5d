"""The vLLM rollout engine against the release the ``gpu`` extra names, on CPU.

``vllm`` is a stand-in built from that release's source (tests/vllm_release.py): the engine may use
only the public ``LLM`` methods, keywords and values that release has. The real engine, on a GPU,
is test_gpu_vllm.py.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch
from vllm_release import StrictVllm, release

from rewardhub.trainer.modeling import load_policy
from rewardhub.trainer.rollout.base import SamplingParams
from rewardhub.trainer.rollout.vllm_engine import VLLMRolloutEngine, policy_weights


class EngineModel:
    """The model inside vLLM's worker: what ``LLM.apply_model`` hands the function it is given."""

    def __init__(self) -> None:
        self.loaded: list[dict[str, torch.Tensor]] = []

    def load_weights(self, weights: list[tuple[str, torch.Tensor]]) -> None:
        self.loaded.append(dict(weights))


@pytest.fixture
def engine_model() -> EngineModel:
    return EngineModel()


@pytest.fixture
def vllm(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, engine_model) -> StrictVllm:
    def generate(requests: list[dict], sampling: Any, **kwargs: Any) -> list:
        # each response: two tokens (3, 4), log-probs -0.5 and -0.25, stopped on its own
        completion = types.SimpleNamespace(
            token_ids=[3, 4],
            logprobs=[{3: types.SimpleNamespace(logprob=-0.5)}, {4: types.SimpleNamespace(logprob=-0.25)}],
            finish_reason="stop",
        )
        return [types.SimpleNamespace(outputs=[completion]) for _ in requests]

    behaviour = {"apply_model": lambda func: [func(engine_model)], "generate": generate}
    return StrictVllm(release(tmp_path_factory), behaviour).install(monkeypatch)


@pytest.fixture
def engine(vllm: StrictVllm, make_config) -> VLLMRolloutEngine:
    cfg = make_config(rollout={"engine": "vllm", "sleep_between_steps": True})
    model, tokenizer = load_policy(cfg.model, cfg.seed)
    return VLLMRolloutEngine(model, tokenizer, cfg)


def _sequence(vllm: StrictVllm) -> list[str]:
    return [name for name, _ in vllm.calls if name.startswith("LLM.")]


def test_the_engine_is_built_with_sleep_mode_and_processed_logprobs(
    engine: VLLMRolloutEngine, vllm: StrictVllm
) -> None:
    [options] = vllm.called("LLM")
    assert options["enable_sleep_mode"] is True
    assert options["logprobs_mode"] == "processed_logprobs"  # the distribution the tokens were drawn from


def test_weights_are_loaded_through_apply_model_then_the_prefix_cache_is_dropped(
    engine: VLLMRolloutEngine, vllm: StrictVllm, engine_model: EngineModel
) -> None:
    assert _sequence(vllm) == ["LLM.apply_model", "LLM.reset_prefix_cache", "LLM.sleep"]
    vllm.calls.clear()
    with torch.no_grad():
        next(engine.model.parameters()).add_(1.0)  # an update
    engine.sync_weights()
    assert _sequence(vllm) == ["LLM.wake_up", "LLM.apply_model", "LLM.reset_prefix_cache", "LLM.sleep"]
    latest = engine_model.loaded[-1]
    expected = dict(policy_weights(engine.model))
    assert latest.keys() == expected.keys()
    assert all(torch.equal(latest[name], expected[name]) for name in expected)


def test_generation_wakes_the_engine_and_puts_it_back_to_sleep(engine: VLLMRolloutEngine, vllm: StrictVllm) -> None:
    vllm.calls.clear()
    rollout = engine.generate([[5, 6], [7]], SamplingParams(max_new_tokens=4, temperature=0.7, top_k=0))
    assert _sequence(vllm) == ["LLM.wake_up", "LLM.generate", "LLM.sleep"]
    [sampling] = vllm.called("SamplingParams")
    assert sampling["logprobs"] == 0 and sampling["temperature"] == 0.7 and sampling["max_tokens"] == 4
    assert sampling["top_k"] == 0  # disabled, as vLLM spells it
    assert rollout.response_ids.tolist() == [[3, 4], [3, 4]]
    assert rollout.logprobs.tolist() == [[-0.5, -0.25], [-0.5, -0.25]]
    assert not rollout.truncated.any()
