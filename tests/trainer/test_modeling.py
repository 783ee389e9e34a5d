"""The toy policy's shape, MoE router freezing and the optional LoRA."""

import sys

import pytest
import torch
from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

from rewardhub.trainer.config import LoraConfig, ModelConfig
from rewardhub.trainer.modeling import freeze_router, frozen_copy, load_policy


def test_the_toy_policy_is_the_issue_s_qwen2_shape():
    model, tokenizer = load_policy(ModelConfig(), seed=0)
    c = model.config
    assert (c.model_type, c.vocab_size, c.hidden_size, c.num_hidden_layers, c.num_attention_heads) == (
        "qwen2",
        16,
        64,
        2,
        4,
    )
    assert len(tokenizer) == 16


def test_the_seed_fixes_the_initial_weights():
    a, _ = load_policy(ModelConfig(), seed=1)
    b, _ = load_policy(ModelConfig(), seed=1)
    c, _ = load_policy(ModelConfig(), seed=2)
    assert torch.equal(a.lm_head.weight, b.lm_head.weight)
    assert not torch.equal(a.lm_head.weight, c.lm_head.weight)


def test_freeze_router_stops_gradients_to_moe_routers_only():
    config = Qwen2MoeConfig(
        vocab_size=16,
        hidden_size=32,
        intermediate_size=32,
        moe_intermediate_size=16,
        shared_expert_intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_experts=4,
        num_experts_per_tok=2,
    )
    model = Qwen2MoeForCausalLM(config)
    frozen = freeze_router(model)
    assert frozen and all(".mlp.gate." in name for name in frozen)
    assert len(frozen) == config.num_hidden_layers
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert not trainable & set(frozen)
    assert any("experts" in n for n in trainable) and any("shared_expert_gate" in n for n in trainable)
    model(input_ids=torch.tensor([[1, 5, 6]])).logits.sum().backward()
    assert all(p.grad is None for n, p in model.named_parameters() if n in frozen)


def test_freeze_router_is_a_no_op_on_a_dense_model():
    model, _ = load_policy(ModelConfig(), seed=0)
    assert freeze_router(model) == []


def test_reference_copy_is_frozen_and_independent():
    model, _ = load_policy(ModelConfig(), seed=0)
    ref = frozen_copy(model)
    assert not any(p.requires_grad for p in ref.parameters())
    with torch.no_grad():
        model.lm_head.weight.add_(1.0)
    assert not torch.equal(model.lm_head.weight, ref.lm_head.weight)


def test_lora_trains_only_adapters():
    pytest.importorskip("peft")
    model, _ = load_policy(ModelConfig(lora=LoraConfig(rank=4, alpha=8)), seed=0)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)


def test_lora_without_peft_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)  # as if it were not installed
    with pytest.raises(ImportError, match="pip install peft"):
        load_policy(ModelConfig(lora=LoraConfig()), seed=0)


def test_a_lora_run_moves_the_adapters_only_and_saves_them(make_config, tmp_path):
    pytest.importorskip("peft")
    from trainer_helpers import ExactScorer, scorer_factory

    from rewardhub.trainer.loop import Trainer

    cfg = make_config(steps=2, model={"lora": {"rank": 4, "alpha": 8}}, checkpoint={"every": 2}, data={"eval": None})
    trainer = Trainer(cfg, scorer=scorer_factory(ExactScorer()))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    rows = trainer.run()
    assert len(rows) == 2 and all(r["actor/grad_norm"] > 0 for r in rows)
    params = dict(trainer.model.named_parameters())
    assert all(torch.equal(params[n], before[n]) for n in params if "lora_" not in n)  # the base is frozen
    assert any(not torch.equal(params[n], before[n]) for n in params if "lora_B" in n)  # the adapters learn
    policy = tmp_path / "run" / "checkpoints" / "step_000002" / "policy"
    assert (policy / "adapter_config.json").exists()
