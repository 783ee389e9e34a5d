"""Backends: one load per process, errors as statuses, generation plumbing, vLLM on a GPU."""

from __future__ import annotations

import importlib.util

import pytest

from rewardhub.models.backends import ChatRequest, get_backend
from rewardhub.models.config import BackendSpec, backend_spec
from rewardhub.models.errors import BackendError
from rewardhub.models.judge import Judge
from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.types import Sample


def test_a_model_loads_once_per_process(tiny_models: dict[str, str]) -> None:
    a = OutcomeRM.Config(model=tiny_models["outcome"])
    b = OutcomeRM.Config(model=tiny_models["outcome"], normalize="sigmoid", max_length=128, batch_size=2)
    assert get_backend(backend_spec(a)) is get_backend(backend_spec(b))  # per-call options share the model
    OutcomeRM().score(Sample(response="x"), a)
    loaded = get_backend(backend_spec(a)).model("sequence")  # type: ignore[attr-defined]
    OutcomeRM().score(Sample(response="y"), b)
    assert get_backend(backend_spec(b)).model("sequence") is loaded  # type: ignore[attr-defined]
    other_device = backend_spec(OutcomeRM.Config(model=tiny_models["outcome"], dtype="bfloat16"))
    assert get_backend(other_device) is not get_backend(backend_spec(a))


def test_openai_backend_needs_a_url() -> None:
    with pytest.raises(BackendError):
        get_backend(BackendSpec(backend="openai", model="m"))
    with pytest.raises(ValueError, match="base_url"):  # a 422 before any work starts
        Judge.Config(model="m")


def test_a_classifier_over_http_is_unsupported_not_zero() -> None:
    from rewardhub.calls import Call, run_call
    from rewardhub.registry import Registry

    cfg = OutcomeRM.Config(model="m", backend="openai", base_url="http://127.0.0.1:9/v1", api_key_env=None)
    [result] = run_call(Registry([OutcomeRM]), Call("outcome_rm", cfg, (Sample(response="x"),), "model", 60.0))
    assert result.status == "error" and "cannot" in (result.error or "")


def test_transformers_generation_and_constrained_choice(tiny_models: dict[str, str]) -> None:
    backend = get_backend(BackendSpec(backend="transformers", model=tiny_models["causal"]))
    messages = (("user", "Is 2+2=4? Answer True or False."),)
    free, chosen, probed = backend.chat(
        [
            ChatRequest(messages, max_tokens=5),
            ChatRequest(messages, max_tokens=8, choices=("True", "False")),
            ChatRequest(messages, max_tokens=1, top_logprobs=5),
        ]
    )
    assert not isinstance(free, Exception) and isinstance(free.text, str)
    assert not isinstance(chosen, Exception) and chosen.text in ("True", "False")
    assert not isinstance(probed, Exception) and probed.logprobs is not None
    assert len(probed.logprobs) == 1 and len(probed.logprobs[0]) == 5
    assert all(lp <= 0.0 for _, lp in probed.logprobs[0])


def test_a_small_judge_on_transformers_answers_or_errors_never_guesses(tiny_models: dict[str, str]) -> None:
    cfg = Judge.Config(model=tiny_models["causal"], backend="transformers", verdict="choices")
    [result] = Judge().score_batch([Sample(prompt="1+1?", response="\\boxed{2}", reference="2")], cfg)
    assert result.status == "ok" and result.score in (0.0, 1.0)  # type: ignore[union-attr]


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _cuda(), reason="needs vLLM and a CUDA GPU")
def test_vllm_matches_transformers_on_an_outcome_rm(tiny_models: dict[str, str]) -> None:
    samples = [Sample(prompt="2+2?", response=f"It is {k}.") for k in range(8)]
    hf = OutcomeRM().score_batch(samples, OutcomeRM.Config(model=tiny_models["outcome"], dtype="float32"))
    vl = OutcomeRM().score_batch(
        samples, OutcomeRM.Config(model=tiny_models["outcome"], backend="vllm", dtype="float32")
    )
    assert [r.score for r in vl] == pytest.approx([r.score for r in hf], abs=1e-3)  # type: ignore[union-attr]


@pytest.mark.gpu
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _cuda(), reason="needs vLLM and a CUDA GPU")
def test_vllm_token_logprobs_match_transformers(tiny_models: dict[str, str]) -> None:
    from rewardhub.models.implicit_prm import ImplicitPRM

    sample = Sample(prompt="Add 2 and 3.", response="2+3 = 5.\n\nSo 5.")
    base = {"model": tiny_models["causal"], "ref_model": tiny_models["causal_other"], "dtype": "float32"}
    hf = ImplicitPRM().score(sample, ImplicitPRM.Config(**base))
    vl = ImplicitPRM().score(sample, ImplicitPRM.Config(**base, backend="vllm", gpu_memory_utilization=0.2))
    assert vl.steps == pytest.approx(hf.steps, abs=1e-3)


# --- at most models.max_loaded at a time --------------------------------------------------------


def _endpoint(name: str) -> BackendSpec:
    """A backend that loads nothing and whose close is visible: its HTTP client closes."""
    return BackendSpec(backend="openai", model=name, base_url="http://127.0.0.1:9/v1", api_key_env=None)


def _closed(backend) -> bool:
    return backend._client.is_closed


def test_past_max_loaded_the_least_recently_used_model_is_closed_and_forgotten(monkeypatch) -> None:
    monkeypatch.setenv("REWARDHUB_MODELS_MAX_LOADED", "2")
    a, b = get_backend(_endpoint("lru-a")), get_backend(_endpoint("lru-b"))
    assert get_backend(_endpoint("lru-a")) is a  # used again: b is now the least recent
    c = get_backend(_endpoint("lru-c"))
    assert _closed(b) and not _closed(a) and not _closed(c)
    assert get_backend(_endpoint("lru-b")) is not b  # asked again, it is built again


def test_a_model_lent_to_a_running_batch_is_closed_only_when_the_batch_ends(monkeypatch) -> None:
    from rewardhub.models.backends import using_backend

    monkeypatch.setenv("REWARDHUB_MODELS_MAX_LOADED", "1")
    with using_backend(_endpoint("lent-a")) as a:
        b = get_backend(_endpoint("lent-b"))  # pushes a out of the cache while its batch runs
        assert not _closed(a)
    assert _closed(a)  # closed as its batch ended
    assert not _closed(b) and get_backend(_endpoint("lent-b")) is b


def test_a_new_policy_every_step_keeps_at_most_max_loaded_models_and_frees_the_rest(
    tiny_models: dict[str, str], tmp_path, monkeypatch
) -> None:
    # PRIME through a trainer: the implicit PRM reads each step's policy from a new folder
    import gc
    import shutil
    import weakref

    from rewardhub.models import backends
    from rewardhub.models.implicit_prm import ImplicitPRM

    monkeypatch.setenv("REWARDHUB_MODELS_MAX_LOADED", "2")
    verifier, policies, references = ImplicitPRM(), [], set()
    for step in range(4):
        policy = shutil.copytree(tiny_models["causal"], tmp_path / f"policy_step_{step}")
        config = ImplicitPRM.Config(model=str(policy), ref_model=tiny_models["causal"])
        result = verifier.score(Sample(prompt="1+1?", response="2"), config)
        assert result.status == "ok", result.error
        policies.append(weakref.ref(backends._cache[backend_spec(config)].backend))
        references.add(id(backends._cache[backend_spec(config, model=config.ref_model)].backend))
    gc.collect()
    assert [policy() is not None for policy in policies] == [False, False, False, True]  # earlier steps freed
    assert len(references) == 1  # the reference, used every step, stayed loaded
    assert len(backends._cache) == 2
