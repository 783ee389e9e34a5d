"""The vLLM backend's reading of vLLM's output shapes, against a stand-in ``vllm`` module.

The real engine needs a GPU (see test_backends.py); this checks, on CPU, that the backend asks
for the right tasks and reads the outputs vLLM documents: pooled data per prompt, prompt
log-probabilities keyed by token id with None first, and per-token top log-probabilities.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

import pytest
from rewardhub.models.backends import ChatRequest
from rewardhub.models.backends.vllm_backend import VLLMBackend
from rewardhub.models.config import BackendSpec


@dataclass
class Logprob:
    logprob: float
    decoded_token: str | None = None


class FakeLLM:
    calls: list[dict[str, Any]] = []

    def __init__(self, **options: Any) -> None:
        FakeLLM.calls.append(options)

    def encode(
        self, prompts: list[dict], pooling_params: Any = None, pooling_task: str = "", use_tqdm: bool = True
    ) -> list:
        FakeLLM.calls.append({"task": pooling_task, "params": pooling_params})
        if pooling_task == "classify":
            data = [[float(len(p["prompt_token_ids"]))] for p in prompts]
        else:  # STEP pooling: one row per tag (tag id 7), [P(neg), P(pos)]
            data = [[[0.25, 0.75] for t in p["prompt_token_ids"] if t == 7] for p in prompts]
        return [types.SimpleNamespace(outputs=types.SimpleNamespace(data=d)) for d in data]

    def generate(self, prompts: list[dict], params: Any, use_tqdm: bool = True) -> list:
        outs = []
        for p in prompts:
            ids = p["prompt_token_ids"]
            lps = [None] + [{tok: Logprob(-0.1 * t)} for t, tok in enumerate(ids) if t > 0]
            outs.append(types.SimpleNamespace(prompt_logprobs=lps))
        return outs

    def chat(self, conversations: list, params: Any, use_tqdm: bool = True) -> list:
        top = {1: Logprob(-0.2, "True"), 2: Logprob(-1.8, "False")}
        out = types.SimpleNamespace(text="True", logprobs=[top], finish_reason="stop")
        return [types.SimpleNamespace(outputs=[out]) for _ in conversations]


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> VLLMBackend:
    fake = types.ModuleType("vllm")
    fake.LLM = FakeLLM  # type: ignore[attr-defined]
    fake.SamplingParams = lambda **kw: kw  # type: ignore[attr-defined]
    fake.PoolingParams = lambda **kw: kw  # type: ignore[attr-defined]
    config = types.ModuleType("vllm.config")
    config.PoolerConfig = lambda **kw: kw  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setitem(sys.modules, "vllm.config", config)
    FakeLLM.calls = []
    return VLLMBackend(BackendSpec(backend="vllm", model="m"))


def test_classify_asks_for_raw_logits(backend: VLLMBackend) -> None:
    assert backend.classify([[1, 2, 3], [4]], batch_size=8) == [[3.0], [1.0]]
    assert FakeLLM.calls[0]["runner"] == "pooling"
    assert FakeLLM.calls[1] == {"task": "classify", "params": {"use_activation": False}}  # no sigmoid


def test_step_probabilities_use_the_step_pooler(backend: VLLMBackend) -> None:
    rows = backend.step_label_probs([[1, 7, 2, 7], [7]], tag_id=7, batch_size=8)
    assert rows == [[[0.25, 0.75], [0.25, 0.75]], [[0.25, 0.75]]]
    assert FakeLLM.calls[0]["pooler_config"] == {"pooling_type": "STEP", "step_tag_id": 7}


def test_prompt_logprobs_are_read_from_the_start_token_on(backend: VLLMBackend) -> None:
    # position t has log-prob -0.1·t; tokens from index 2 of a 4-token prompt
    assert backend.token_logprobs([[5, 6, 8, 9]], starts=[2], batch_size=8) == [pytest.approx([-0.2, -0.3])]


def test_chat_returns_text_and_first_token_alternatives(backend: VLLMBackend) -> None:
    [reply] = backend.chat([ChatRequest((("user", "ok?"),), max_tokens=1, top_logprobs=2)])
    assert not isinstance(reply, Exception)
    assert reply.text == "True" and reply.logprobs == ((("True", -0.2), ("False", -1.8)),)
