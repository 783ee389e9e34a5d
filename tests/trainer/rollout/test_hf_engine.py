"""The CPU engine samples with the policy and returns the behaviour log-probs of its samples."""

import pytest
import torch

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import ModelConfig, ToyModelConfig
from rewardhub.trainer.logprobs import response_logprobs
from rewardhub.trainer.modeling import build_toy_model
from rewardhub.trainer.rollout import HFRolloutEngine, SamplingParams


@pytest.fixture(scope="module")
def policy():
    tokenizer = build_char_tokenizer()
    cfg = ModelConfig(toy=ToyModelConfig(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2))
    return build_toy_model(cfg, tokenizer, seed=0), tokenizer


def prompts(tokenizer):
    # different lengths, so left padding is exercised
    return [tokenizer(p)["input_ids"] for p in ["1+2=", "12+3=", "9+9=", "0+0="]] * 4


def test_rollout_logprobs_match_the_trainers_recomputation(policy):
    model, tokenizer = policy
    engine = HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(0))
    ro = engine.generate(prompts(tokenizer), SamplingParams(max_new_tokens=6, temperature=0.7))
    with torch.no_grad():
        trainer = response_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.response_ids, ro.response_mask, 0.7)
    mask = ro.response_mask
    torch.testing.assert_close(trainer.logprobs[mask], ro.logprobs[mask], atol=1e-4, rtol=0)
    assert (ro.logprobs[~mask] == 0).all()


def test_response_mask_stops_after_the_end_token_and_truncation_is_flagged(policy):
    model, tokenizer = policy
    engine = HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(1))
    ro = engine.generate(prompts(tokenizer), SamplingParams(max_new_tokens=5))
    eos = tokenizer.eos_token_id
    for ids, mask, truncated in zip(ro.response_ids, ro.response_mask, ro.truncated, strict=True):
        length = int(mask.sum())
        kept = ids[:length].tolist()
        assert mask[:length].all() and not mask[length:].any()
        assert (eos in kept) == (not truncated)
        if not truncated:
            assert kept.index(eos) == length - 1
    assert ro.texts == tuple(tokenizer.batch_decode(ro.response_ids.tolist(), skip_special_tokens=True))


def test_greedy_is_deterministic_and_has_probability_one(policy):
    model, tokenizer = policy
    engine = HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(2))
    a = engine.generate(prompts(tokenizer), SamplingParams(max_new_tokens=4, temperature=0.0))
    b = engine.generate(prompts(tokenizer), SamplingParams(max_new_tokens=4, temperature=0.0))
    assert torch.equal(a.response_ids, b.response_ids)
    assert (a.logprobs == 0).all()


def test_sampling_is_reproducible_from_the_generator(policy):
    model, tokenizer = policy
    runs = [
        HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(3)).generate(
            prompts(tokenizer), SamplingParams(max_new_tokens=4)
        )
        for _ in range(2)
    ]
    assert torch.equal(runs[0].response_ids, runs[1].response_ids)


def test_batched_generation_in_chunks_keeps_the_order(policy):
    model, tokenizer = policy
    ro = HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(4), batch_size=3).generate(
        prompts(tokenizer), SamplingParams(max_new_tokens=4, temperature=0.0)
    )
    whole = HFRolloutEngine(model, tokenizer).generate(
        prompts(tokenizer), SamplingParams(max_new_tokens=4, temperature=0.0)
    )
    assert ro.texts == whole.texts
    assert ro.size == 16
