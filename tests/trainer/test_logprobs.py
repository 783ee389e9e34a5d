"""The trainer's log-probs of a response: exact, without the prompt's logits, a group's prompt run once.

``response_logprobs`` is the update's forward pass. It must give log pi(y_t | context) of every
response token, and their gradients, exactly as a full forward pass does, and it must not pay for
what nothing reads: the vocabulary projection of the prompt's positions (a 49k-token vocabulary over
a 47-token prompt and a 12-token answer: four fifths of the output layer's work, and of its
memory), and the same prompt run once per completion of a GRPO group.
"""

from __future__ import annotations

import pytest
import torch

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import ModelConfig, ToyModelConfig
from rewardhub.trainer.logprobs import response_logprobs
from rewardhub.trainer.modeling import build_toy_model
from rewardhub.trainer.rollout.hf import position_ids_for

PROMPT, WIDTH = 9, 4


def _model(lora: bool) -> torch.nn.Module:
    toy = ToyModelConfig(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2)
    model = build_toy_model(ModelConfig(toy=toy), build_char_tokenizer(), seed=0)
    if lora:
        peft = pytest.importorskip("peft")
        config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
        model = peft.get_peft_model(model, config)
    return model.eval()


def _batch(groups: bool = False) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    prompt_ids = torch.randint(4, 16, (3, PROMPT), generator=g)
    prompt_mask = torch.ones(3, PROMPT, dtype=torch.bool)
    prompt_mask[1, :4] = False  # left padding, as the engine lays prompts out
    response_ids = torch.randint(4, 16, (3, WIDTH), generator=g)
    response_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    if groups:  # rows 0-1 and 3-5 are two groups' completions, row 2 a prompt of its own
        rows = torch.tensor([0, 0, 2, 1, 1, 1])
        prompt_ids, prompt_mask = prompt_ids[rows], prompt_mask[rows]
        response_ids = torch.randint(4, 16, (6, WIDTH), generator=g)
        response_mask = response_mask[torch.tensor([0, 1, 2, 0, 1, 2])]
    return prompt_ids, prompt_mask, response_ids, response_mask


def _full_forward(model, prompt_ids, prompt_mask, response_ids, response_mask, temperature) -> torch.Tensor:
    """Every position's logits, then the response's: the direct computation."""
    ids = torch.cat([prompt_ids, response_ids], dim=1)
    mask = torch.cat([prompt_mask, response_mask], dim=1)
    logits = model(input_ids=ids, attention_mask=mask.long(), position_ids=position_ids_for(mask)).logits
    logits = logits[:, PROMPT - 1 : -1] / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, response_ids.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize("groups", [False, True], ids=["distinct prompts", "groups"])
@pytest.mark.parametrize("lora", [False, True], ids=["full model", "LoRA"])
def test_response_log_probs_and_their_gradients_equal_a_full_forward_pass(lora: bool, groups: bool) -> None:
    model, batch = _model(lora), _batch(groups)
    weights = torch.randn(batch[2].shape, generator=torch.Generator().manual_seed(1))  # some loss of the log-probs
    got = response_logprobs(model, *batch, temperature=0.7).logprobs
    (got * weights * batch[3]).sum().backward()
    got_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    expected = _full_forward(model, *batch, temperature=0.7)
    (expected * weights * batch[3]).sum().backward()
    masked = batch[3]
    torch.testing.assert_close(got[masked], expected[masked], rtol=0, atol=1e-5)
    assert got_grads.keys() == {n for n, p in model.named_parameters() if p.grad is not None}
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(got_grads[name], p.grad, rtol=1e-4, atol=1e-6, msg=name)


def _rows_through_the_embedding(model, batch) -> list[tuple[int, ...]]:
    embedding = model.get_input_embeddings()
    seen: list[tuple[int, ...]] = []
    hook = embedding.register_forward_hook(lambda module, args, out: seen.append(tuple(args[0].shape)))
    try:
        response_logprobs(model, *batch).logprobs.sum().backward()
    finally:
        hook.remove()
    return seen


@pytest.mark.parametrize("lora", [False, True], ids=["full model", "LoRA"])
def test_a_prompt_shared_by_a_group_is_run_once_then_each_response_on_its_own(lora: bool) -> None:
    seen = _rows_through_the_embedding(_model(lora), _batch(groups=True))
    assert seen == [(3, PROMPT), (6, WIDTH)]  # three distinct prompts, then six responses


def test_under_activation_checkpointing_the_rows_run_whole() -> None:
    model = _model(lora=False)
    enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
    enable()
    model.train()  # transformers recomputes the layers without a cache: nothing to hand over
    assert _rows_through_the_embedding(model, _batch(groups=True)) == [(6, PROMPT + WIDTH)]


@pytest.mark.parametrize("lora", [False, True], ids=["full model", "LoRA"])
def test_only_the_positions_that_predict_the_response_reach_the_output_layer(lora: bool) -> None:
    model, batch = _model(lora), _batch()
    head = (model.get_base_model() if lora else model).lm_head
    seen: list[tuple[int, ...]] = []
    hook = head.register_forward_hook(lambda module, args, out: seen.append(tuple(args[0].shape)))
    try:
        response_logprobs(model, *batch, temperature=1.0).logprobs.sum().backward()
    finally:
        hook.remove()
    assert seen == [(3, WIDTH + 1, 32)]  # the last prompt position predicts the first response token
