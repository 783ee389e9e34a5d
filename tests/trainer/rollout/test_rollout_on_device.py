"""Rollouts on the device (a CUDA GPU; REWARDHUB_TEST_DEVICE=cpu runs the same checks on the CPU),
without vLLM: the lean decoder computes what transformers computes there too, the engine's
log-probabilities are the trainer's, sampling follows the device's generator, and what comes back
lives on the CPU (the reward client and the advantages read it there)."""

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import ModelConfig, ToyModelConfig
from rewardhub.trainer.logprobs import response_logprobs
from rewardhub.trainer.modeling import build_toy_model
from rewardhub.trainer.rollout import HFRolloutEngine, SamplingParams, left_pad, position_ids_for
from rewardhub.trainer.rollout.lean_decoder import lean_decoder_for

pytestmark = pytest.mark.gpu

SMALL = {"vocab_size": 24, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2}
ARCHITECTURES = {
    "qwen2": Qwen2Config(**SMALL, num_attention_heads=4, num_key_value_heads=4),
    "llama-gqa": LlamaConfig(**SMALL, num_attention_heads=4, num_key_value_heads=2),
}
PROMPTS = [[1, 2, 3, 4, 5], [6, 7], [8, 9, 10], [11]]  # different lengths: left padding is exercised


def toy_policy(device: str, dtype: torch.dtype = torch.float32):
    tokenizer = build_char_tokenizer()
    cfg = ModelConfig(toy=ToyModelConfig(hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4))
    model = build_toy_model(cfg, tokenizer, seed=0).to(device=device, dtype=dtype)
    return model, tokenizer


def addition_prompts(tokenizer):
    return [tokenizer(p)["input_ids"] for p in ["1+2=", "12+3=", "9+9=", "0+0="]] * 8


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("name", ARCHITECTURES)
def test_the_lean_decoder_gives_the_transformers_logits_on_the_device(device, name, dtype):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(ARCHITECTURES[name]).to(device=device, dtype=dtype).eval()
    ids, mask = (t.to(device) for t in left_pad(PROMPTS, pad_id=0))
    appended = torch.tensor([[3, 4, 5], [7, 8, 9], [11, 12, 13], [15, 16, 17]], device=device)
    decoder = lean_decoder_for(model, ids.shape[1] + 3)
    assert decoder is not None
    lean = [decoder.prefill(ids, mask, max_new_tokens=3)] + [decoder.decode(appended[:, t]) for t in range(2)]
    full_ids = torch.cat([ids, appended[:, :2]], dim=1)
    full_mask = torch.cat([mask, torch.ones(4, 2, dtype=torch.bool, device=device)], dim=1)
    with torch.no_grad():
        reference = model(
            input_ids=full_ids, attention_mask=full_mask.long(), position_ids=position_ids_for(full_mask)
        ).logits
    tolerance = 1e-4 if dtype == torch.float32 else 0.05 * float(reference.float().std())
    for t, logits in enumerate(lean):
        assert logits.dtype == dtype and logits.device.type == torch.device(device).type
        torch.testing.assert_close(logits.float(), reference[:, ids.shape[1] - 1 + t].float(), atol=tolerance, rtol=0)


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "transformers"])
def test_rollout_logprobs_on_the_device_match_the_trainers_recomputation(device, lean):
    model, tokenizer = toy_policy(device)
    engine = HFRolloutEngine(model, tokenizer, torch.Generator(device).manual_seed(0), lean=lean)
    ro = engine.generate(addition_prompts(tokenizer), SamplingParams(max_new_tokens=6, temperature=0.7))
    assert {t.device.type for t in (ro.prompt_ids, ro.response_ids, ro.response_mask, ro.logprobs)} == {"cpu"}
    assert ro.logprobs.dtype == torch.float32
    on = (ro.prompt_ids, ro.prompt_mask, ro.response_ids, ro.response_mask)
    with torch.no_grad():
        trainer = response_logprobs(model, *(t.to(device) for t in on), 0.7)
    mask = ro.response_mask
    torch.testing.assert_close(trainer.logprobs.cpu()[mask], ro.logprobs[mask], atol=1e-4, rtol=0)


def test_bf16_rollouts_stay_close_to_the_trainers_bf16_logprobs(device):
    model, tokenizer = toy_policy(device, torch.bfloat16)
    engine = HFRolloutEngine(model, tokenizer, torch.Generator(device).manual_seed(0))
    ro = engine.generate(addition_prompts(tokenizer), SamplingParams(max_new_tokens=6, temperature=1.0))
    on = (ro.prompt_ids, ro.prompt_mask, ro.response_ids, ro.response_mask)
    with torch.no_grad():
        trainer = response_logprobs(model, *(t.to(device) for t in on), 1.0).logprobs.cpu()
    mask = ro.response_mask
    # same weights, different kernels: the train-inference mismatch that rollout/mismatch_kl reports
    log_ratio = trainer[mask] - ro.logprobs[mask]
    assert torch.isfinite(ro.logprobs).all()
    assert float((torch.expm1(log_ratio) - log_ratio).mean()) < 1e-3


def test_sampling_on_the_device_is_reproducible_from_its_generator(device):
    model, tokenizer = toy_policy(device)
    params = SamplingParams(max_new_tokens=5, temperature=1.0)
    runs = [
        HFRolloutEngine(model, tokenizer, torch.Generator(device).manual_seed(3)).generate(
            addition_prompts(tokenizer), params
        )
        for _ in range(2)
    ]
    assert torch.equal(runs[0].response_ids, runs[1].response_ids)
    other = HFRolloutEngine(model, tokenizer, torch.Generator(device).manual_seed(4)).generate(
        addition_prompts(tokenizer), params
    )
    assert not torch.equal(runs[0].response_ids, other.response_ids)
