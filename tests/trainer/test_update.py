"""Gradient accumulation is exact, and the default update is on-policy (ratio identically 1)."""

import copy

import pytest
import torch

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import ModelConfig, ToyModelConfig, TrainConfig
from rewardhub.trainer.modeling import build_toy_model
from rewardhub.trainer.update import TrainBatch, accumulate_gradients, policy_update


@pytest.fixture(scope="module")
def model():
    cfg = ModelConfig(toy=ToyModelConfig(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2))
    return build_toy_model(cfg, build_char_tokenizer(), seed=0)


def make_batch(size=8, width=5, seed=0) -> TrainBatch:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([5, 1, 3, 2, 4, 5, 1, 3])[:size]
    mask = torch.arange(width).expand(size, width) < lengths.unsqueeze(-1)
    valid = torch.ones(size, dtype=torch.bool)
    valid[2] = False  # one sample the service could not judge
    return TrainBatch(
        prompt_ids=torch.randint(4, 16, (size, 4), generator=g),
        prompt_mask=torch.ones(size, 4, dtype=torch.bool),
        response_ids=torch.randint(4, 16, (size, width), generator=g),
        response_mask=mask,
        loss_mask=mask & valid.unsqueeze(-1),
        advantages=torch.randn(size, 1, generator=g).expand(size, width) * mask,
        rollout_logp=-torch.rand(size, width, generator=g) * mask,
    )


def config(micro=None, **algorithm) -> TrainConfig:
    """The sections the update reads: 8 samples of up to 5 tokens (the `constant` aggregation's length)."""
    return TrainConfig.model_validate(
        {
            "data": {"train": "unused.jsonl"},
            "rollout": {"prompts_per_step": 2, "group_size": 4, "max_new_tokens": 5, "temperature": 1.0},
            "optim": {"micro_batch_size": micro, "max_grad_norm": 1.0},
            "algorithm": algorithm,
        }
    )


def grads(model, batch, cfg):
    m = copy.deepcopy(model)
    accumulate_gradients(m, batch, cfg)
    return {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("aggregation", ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant"])
@pytest.mark.parametrize("micro", [1, 2, 3])
def test_accumulated_micro_batches_give_the_big_batch_gradient(model, aggregation, micro):
    batch = make_batch()
    whole = grads(model, batch, config(aggregation=aggregation, entropy_coef=0.01))
    accumulated = grads(model, batch, config(micro, aggregation=aggregation, entropy_coef=0.01))
    assert whole.keys() == accumulated.keys()
    for name in whole:
        torch.testing.assert_close(accumulated[name], whole[name], atol=1e-6, rtol=1e-5, msg=name)


def test_a_masked_sample_contributes_no_gradient(model):
    cfg = config(entropy_coef=0.01)
    batch = make_batch()
    # change everything about the masked row: the gradient must not move
    altered = TrainBatch(
        **{**batch.__dict__, "advantages": batch.advantages.clone(), "response_ids": batch.response_ids.clone()}
    )
    altered.advantages[2] = 100.0
    altered.response_ids[2] = 5
    a, b = grads(model, batch, cfg), grads(model, altered, cfg)
    for name in a:
        torch.testing.assert_close(a[name], b[name], msg=name)


def test_the_default_update_is_on_policy_ratio_identically_one(model):
    m = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(m.parameters(), lr=1e-3)
    result = policy_update(m, optimizer, make_batch(), config())
    assert result.stats.sums["ppo_kl"] == 0.0
    assert result.stats.sums["clipfrac"] == 0.0
    assert len(result.grad_norms) == 1  # one optimizer step per batch


def test_epochs_and_mini_batches_multiply_the_optimizer_steps(model):
    m = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(m.parameters(), lr=1e-2)
    batch = make_batch()
    with torch.no_grad():
        from rewardhub.trainer.logprobs import response_logprobs

        old = response_logprobs(
            m, batch.prompt_ids, batch.prompt_mask, batch.response_ids, batch.response_mask
        ).logprobs
    off_policy = TrainBatch(**{**batch.__dict__, "old_logp": old})
    result = policy_update(m, optimizer, off_policy, config(epochs=2, mini_batches=2))
    assert len(result.grad_norms) == 4
    assert result.stats.sums["ppo_kl"] != 0.0  # later passes see a moved policy


def test_a_forward_pass_run_ahead_gives_the_same_gradients(model):
    # the step runs the first micro-batch's forward while the service scores: same gradient
    from rewardhub.trainer.logprobs import response_logprobs

    cfg = config(3, entropy_coef=0.01)
    batch = make_batch()
    expected = grads(model, batch, cfg)
    m = copy.deepcopy(model)
    first = batch.rows(0, 3)
    ahead = response_logprobs(
        m, first.prompt_ids, first.prompt_mask, first.response_ids, first.response_mask, with_entropy=True
    )
    accumulate_gradients(m, batch, cfg, prefetched=ahead)
    for name, p in m.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(p.grad, expected[name], msg=name)
