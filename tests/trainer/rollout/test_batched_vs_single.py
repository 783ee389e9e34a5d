"""Left padding is invisible: a prompt sampled in a batch of longer and shorter prompts gets the
tokens and log-probabilities it gets alone, through the lean decoder and through transformers."""

import pytest
import torch

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import ModelConfig, ToyModelConfig
from rewardhub.trainer.modeling import build_toy_model
from rewardhub.trainer.rollout import HFRolloutEngine, SamplingParams

PROMPTS = ["1+2=", "12+345=", "9=", "0+0+0+0+0="]  # 3 to 11 tokens: every row but the longest is padded


@pytest.fixture(scope="module")
def policy():
    tokenizer = build_char_tokenizer()
    cfg = ModelConfig(toy=ToyModelConfig(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2))
    model = build_toy_model(cfg, tokenizer, seed=5)
    with torch.no_grad():  # sharper than the default initialisation: no near-ties for greedy decoding
        for matrix in (p for p in model.parameters() if p.ndim >= 2):
            matrix.mul_(8.0)
    return model, tokenizer


@pytest.mark.parametrize("lean", [True, False])
def test_greedy_tokens_and_logprobs_in_a_batch_equal_each_prompt_alone(policy, lean):
    model, tokenizer = policy
    ids = [tokenizer(p)["input_ids"] for p in PROMPTS]
    params = SamplingParams(max_new_tokens=6, temperature=0.0)
    together = HFRolloutEngine(model, tokenizer, lean=lean).generate(ids, params)
    for row, prompt in enumerate(ids):
        alone = HFRolloutEngine(model, tokenizer, lean=lean).generate([prompt], params)
        width = alone.response_ids.shape[1]
        assert together.texts[row] == alone.texts[0]
        assert torch.equal(together.response_ids[row, :width], alone.response_ids[0])
        assert torch.equal(together.response_mask[row, :width], alone.response_mask[0])
        assert not together.response_mask[row, width:].any()


@pytest.mark.parametrize("lean", [True, False])
def test_sampled_logprobs_in_a_batch_equal_the_same_tokens_scored_alone(policy, lean):
    model, tokenizer = policy
    ids = [tokenizer(p)["input_ids"] for p in PROMPTS]
    params = SamplingParams(max_new_tokens=6, temperature=1.0)
    together = HFRolloutEngine(model, tokenizer, torch.Generator().manual_seed(0), lean=lean).generate(ids, params)
    from rewardhub.trainer.logprobs import response_logprobs

    for row in range(len(PROMPTS)):
        one = together.select([row])
        keep = one.prompt_mask[0]
        with torch.no_grad():  # the same tokens, without any padding around the prompt
            alone = response_logprobs(
                model, one.prompt_ids[:, keep], one.prompt_mask[:, keep], one.response_ids, one.response_mask, 1.0
            )
        mask = one.response_mask
        torch.testing.assert_close(alone.logprobs[mask], one.logprobs[mask], atol=1e-4, rtol=0)
