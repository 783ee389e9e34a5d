"""The model verifiers on the device (a CUDA GPU; REWARDHUB_TEST_DEVICE=cpu runs the same checks on
the CPU): bfloat16 weights, scores that agree with float32 on the CPU to within bfloat16 round-off,
padding that changes nothing, generation side by side, nothing of a batch left on the GPU.

The models are the tiny local ones with a wide initialisation, so that reading a wrong position
or a wrong row would move a score by about its whole spread, while bfloat16 moves it by ~2%.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
import torch

from rewardhub.models.backends import ChatRequest, get_backend
from rewardhub.models.config import BackendSpec
from rewardhub.models.implicit_prm import ImplicitPRM
from rewardhub.models.judge import Judge
from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.models.prm import ProcessRM
from rewardhub.server import EmbeddedServer
from rewardhub.types import Result, Sample

pytestmark = pytest.mark.gpu

SAMPLES = [
    Sample(prompt=f"What is {k}+{k}?", response=f"{k} plus {k}.\n\n" + "Check it again.\n\n" * (k % 4) + f"So {2 * k}.")
    for k in range(12)
]


def values(results: list[Result | float]) -> list[float]:
    """Every number a verifier produced: its step rewards where it has them, else its score."""
    out: list[float] = []
    for r in results:
        assert isinstance(r, Result) and r.status == "ok", r
        out.extend(r.steps if r.steps is not None else [r.score])
    return out


def assert_within_bf16(got: list[float], reference: list[float]) -> None:
    spread = max(reference) - min(reference)
    assert spread > 0.1  # the models are sharp enough for the comparison to mean something
    worst = max(abs(a - b) for a, b in zip(got, reference, strict=True))
    assert worst <= 0.1 * spread, f"largest difference {worst:.4f}, spread of the scores {spread:.4f}"


def test_auto_precision_is_half_on_a_gpu_and_the_weights_are_on_the_device(
    sharp_models: dict[str, str], device: str
) -> None:
    backend = get_backend(BackendSpec(backend="transformers", model=sharp_models["outcome"], device=device))
    model = backend.model("sequence")  # type: ignore[attr-defined]
    if device.startswith("cuda"):
        assert model.dtype == (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16)
    else:
        assert model.dtype == torch.float32
    assert {p.device.type for p in model.parameters()} == {torch.device(device).type}
    assert not model.training


@pytest.mark.parametrize(
    ("verifier", "model", "extra"),
    [
        (OutcomeRM, "outcome", {}),
        (ProcessRM, "prm", {}),
        (ImplicitPRM, "causal", {"ref_model": "causal_other", "granularity": "token"}),
        (ImplicitPRM, "causal", {"ref_model": "causal_other", "granularity": "step"}),
    ],
)
def test_bf16_on_the_device_agrees_with_float32_on_the_cpu(
    sharp_models: dict[str, str], device: str, verifier: type, model: str, extra: dict
) -> None:
    options = {**extra, "model": sharp_models[model]}
    if "ref_model" in options:
        options["ref_model"] = sharp_models[options["ref_model"]]
    reference = verifier().score_batch(SAMPLES, verifier.Config(**options, device="cpu", dtype="float32"))
    got = verifier().score_batch(SAMPLES, verifier.Config(**options, device=device, dtype="bfloat16", batch_size=5))
    assert_within_bf16(values(got), values(reference))


def test_padding_in_a_bf16_batch_changes_no_score(sharp_models: dict[str, str], device: str) -> None:
    cfg = OutcomeRM.Config(model=sharp_models["outcome"], device=device, dtype="bfloat16", batch_size=12)
    together = values(OutcomeRM().score_batch(SAMPLES, cfg))
    alone = [v for s in SAMPLES for v in values([OutcomeRM().score(s, cfg)])]
    assert_within_bf16(together, alone)


def test_the_same_policy_and_reference_give_zero_implicit_rewards_in_bf16(
    sharp_models: dict[str, str], device: str
) -> None:
    cfg = ImplicitPRM.Config(
        model=sharp_models["causal"], ref_model=sharp_models["causal_copy"], device=device, dtype="bfloat16"
    )
    rewards = values(ImplicitPRM().score_batch(SAMPLES, cfg))
    assert len(rewards) > len(SAMPLES) and rewards == pytest.approx([0.0] * len(rewards), abs=1e-6)


def test_batched_generation_on_the_device_equals_one_prompt_at_a_time(
    sharp_models: dict[str, str], device: str
) -> None:
    backend = get_backend(
        BackendSpec(backend="transformers", model=sharp_models["causal"], device=device, dtype="float32")
    )
    requests = [ChatRequest((("user", s.prompt_text()),), max_tokens=10, top_logprobs=2) for s in SAMPLES[:6]]
    together = backend.chat(requests)
    for request, got in zip(requests, together, strict=True):
        [alone] = backend.chat([request])
        assert not isinstance(got, Exception) and not isinstance(alone, Exception)
        assert (got.text, got.finish_reason) == (alone.text, alone.finish_reason)
        assert got.logprobs is not None and alone.logprobs is not None
        first_got, first_alone = got.logprobs[0], alone.logprobs[0]
        assert first_got[0][0] == first_alone[0][0]
        assert first_got[0][1] == pytest.approx(first_alone[0][1], abs=1e-3)


@pytest.mark.parametrize("verdict", ["choices", "logprobs", "last_line"])
def test_a_bf16_judge_on_the_device_answers_every_sample(
    sharp_models: dict[str, str], device: str, verdict: str
) -> None:
    samples = [Sample(prompt=s.prompt, response=s.response, reference=str(2 * k)) for k, s in enumerate(SAMPLES)]
    options = {"model": sharp_models["causal"], "backend": "transformers", "verdict": verdict, "max_tokens": 8}
    got = Judge().score_batch(samples, Judge.Config(**options, device=device, dtype="bfloat16"))
    # a random model rarely ends on a verdict line: an unreadable verdict is an error, never a guessed score
    assert all(isinstance(r, Result) for r in got)
    # logprobs: a random model need not rank True or False among its top first tokens; that is the
    # named error, and bf16 on the device must reach the same verdict (or the same error) as fp32 on the CPU
    unread = {"last_line": "", "logprobs": "neither 'True' nor 'False' is among the judge's top first tokens"}
    assert all(r.status == "ok" or (verdict in unread and unread[verdict] in (r.error or "")) for r in got)  # type: ignore[union-attr]
    if verdict == "logprobs":
        reference = Judge().score_batch(samples, Judge.Config(**options, device="cpu", dtype="float32"))
        assert [r.status for r in got] == [r.status for r in reference]  # type: ignore[union-attr]
        assert [r.score for r in got] == pytest.approx([r.score for r in reference], abs=0.05)  # type: ignore[union-attr]


def test_nothing_of_a_batch_stays_on_the_gpu(sharp_models: dict[str, str], device: str) -> None:
    if not device.startswith("cuda"):
        pytest.skip("memory accounting is CUDA's")
    long = [Sample(prompt=s.prompt, response=s.response * 20) for s in SAMPLES] * 4
    calls = [
        (OutcomeRM(), OutcomeRM.Config(model=sharp_models["outcome"], device=device, batch_size=16)),
        (ProcessRM(), ProcessRM.Config(model=sharp_models["prm"], device=device, batch_size=16)),
        (
            ImplicitPRM(),
            ImplicitPRM.Config(model=sharp_models["causal"], ref_model=sharp_models["causal_other"], device=device),
        ),
    ]
    for verifier, cfg in calls:
        verifier.score_batch(long[:2], cfg)  # loads the weights
        torch.cuda.synchronize()
        loaded = torch.cuda.memory_allocated()
        assert all(r.status == "ok" for r in verifier.score_batch(long, cfg))  # type: ignore[union-attr]
        torch.cuda.synchronize()
        assert torch.cuda.memory_allocated() == loaded, type(verifier).__name__
    judge = get_backend(BackendSpec(backend="transformers", model=sharp_models["causal"], device=device))
    judge.chat([ChatRequest((("user", "hi"),), max_tokens=4)])
    loaded = torch.cuda.memory_allocated()
    judge.chat([ChatRequest((("user", s.prompt_text()),), max_tokens=32, top_logprobs=5) for s in SAMPLES])
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == loaded


def test_the_service_on_the_device_scores_concurrent_requests_as_in_process(
    sharp_models: dict[str, str], device: str
) -> None:
    config = {"model": sharp_models["outcome"], "device": device, "dtype": "bfloat16", "batch_size": 16}
    spec = {"name": "outcome_rm", "config": config}
    samples = [s.model_dump(exclude_none=True) | {"id": str(i)} for i, s in enumerate(SAMPLES)]

    async def run(url: str) -> list[dict]:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            replies = await asyncio.gather(
                *(client.post("/v1/score", json={"verifier": spec, "samples": [s]}) for s in samples)
            )
        return [r.json()["results"][0] for r in replies]

    with EmbeddedServer(workers=1, model_batch_wait_ms=20.0) as url:
        served = asyncio.run(run(url))
    direct = values(OutcomeRM().score_batch(SAMPLES, OutcomeRM.Config(**config)))
    assert [r["status"] for r in served] == ["ok"] * len(SAMPLES)
    assert_within_bf16([r["score"] for r in served], direct)
