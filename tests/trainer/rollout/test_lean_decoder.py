"""The lean decoder computes what transformers computes, for each architecture it claims, and
refuses the rest; the engine samples the same tokens through either."""

import pytest
import torch
from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

from rewardhub.trainer.rollout import HFRolloutEngine, SamplingParams, left_pad, position_ids_for
from rewardhub.trainer.rollout.lean_decoder import LeanDecoder, lean_decoder_for

SMALL = {"vocab_size": 24, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}

ARCHITECTURES = {
    "qwen2": Qwen2Config(**SMALL, num_attention_heads=4, num_key_value_heads=4),
    "llama-gqa-bias": LlamaConfig(**SMALL, num_attention_heads=4, num_key_value_heads=2, attention_bias=True),
    "qwen3-qk-norm": Qwen3Config(**SMALL, num_attention_heads=4, num_key_value_heads=2, head_dim=16),
    "mistral": MistralConfig(**SMALL, num_attention_heads=4, num_key_value_heads=1, sliding_window=None),
    "llama3-rope-scaling": LlamaConfig(
        **SMALL,
        num_attention_heads=2,
        rope_parameters={
            "rope_type": "llama3",
            "rope_theta": 10000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 16,
        },
    ),
}


def build(config):
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config).eval()


PROMPTS = [[1, 2, 3, 4, 5], [6, 7], [8, 9, 10], [11]]  # different lengths: left padding is exercised


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_prefill_and_each_decode_step_give_the_transformers_logits(name):
    model = build(ARCHITECTURES[name])
    ids, mask = left_pad(PROMPTS, pad_id=0)
    appended = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14], [15, 16, 17, 18]])  # [B, 4]
    decoder = lean_decoder_for(model, ids.shape[1] + 4)
    assert isinstance(decoder, LeanDecoder)
    lean = [decoder.prefill(ids, mask, max_new_tokens=4)]
    lean += [decoder.decode(appended[:, t]) for t in range(3)]

    full_ids = torch.cat([ids, appended[:, :3]], dim=1)
    full_mask = torch.cat([mask, torch.ones(4, 3, dtype=torch.bool)], dim=1)
    with torch.no_grad():
        reference = model(
            input_ids=full_ids, attention_mask=full_mask.long(), position_ids=position_ids_for(full_mask)
        ).logits
    width = ids.shape[1]
    for t, logits in enumerate(lean):
        torch.testing.assert_close(logits, reference[:, width - 1 + t], atol=1e-5, rtol=0)


def test_a_prompt_shared_by_a_group_is_run_once_and_each_row_decodes_on_its_own(monkeypatch):
    model = build(ARCHITECTURES["llama-gqa-bias"])
    group = [PROMPTS[0], PROMPTS[1], PROMPTS[0], PROMPTS[1], PROMPTS[0], PROMPTS[2]]  # two groups and a single
    ids, mask = left_pad(group, pad_id=0)
    appended = torch.tensor([[3, 4, 5], [7, 8, 9], [11, 12, 13], [15, 16, 17], [19, 20, 21], [22, 23, 1]])
    decoder = lean_decoder_for(model, ids.shape[1] + 3)
    prefilled_rows = []
    run = decoder._prefill
    monkeypatch.setattr(decoder, "_prefill", lambda i, m, n: prefilled_rows.append(len(i)) or run(i, m, n))
    lean = [decoder.prefill(ids, mask, max_new_tokens=3)]
    lean += [decoder.decode(appended[:, t]) for t in range(2)]
    assert prefilled_rows == [3]  # one pass over the three distinct prompts

    full_ids = torch.cat([ids, appended[:, :2]], dim=1)
    full_mask = torch.cat([mask, torch.ones(len(group), 2, dtype=torch.bool)], dim=1)
    with torch.no_grad():
        reference = model(
            input_ids=full_ids, attention_mask=full_mask.long(), position_ids=position_ids_for(full_mask)
        ).logits
    for t, logits in enumerate(lean):  # rows that shared a prompt part ways after their first token
        torch.testing.assert_close(logits, reference[:, ids.shape[1] - 1 + t], atol=1e-5, rtol=0)


def test_other_architectures_and_short_sliding_windows_are_refused():
    gpt2 = AutoModelForCausalLM.from_config(GPT2Config(vocab_size=24, n_embd=32, n_layer=1, n_head=2))
    assert lean_decoder_for(gpt2, 10) is None
    windowed = build(MistralConfig(**SMALL, num_attention_heads=4, num_key_value_heads=2, sliding_window=8))
    assert lean_decoder_for(windowed, total_length=12) is None  # the window would cut the context
    assert lean_decoder_for(windowed, total_length=8) is not None  # within the window it is plain attention


def test_decode_before_prefill_is_an_error():
    decoder = LeanDecoder(build(ARCHITECTURES["qwen2"]))
    with pytest.raises(RuntimeError, match="prefill"):
        decoder.decode(torch.tensor([1, 2]))


class _Tokenizer:
    """The two things the engine asks of a tokenizer."""

    pad_token_id = 0
    eos_token_id = 2

    def batch_decode(self, rows, skip_special_tokens=True):
        return [" ".join(str(t) for t in row) for row in rows]


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_the_engine_samples_the_same_tokens_through_either_forward(temperature):
    model = build(ARCHITECTURES["llama-gqa-bias"])
    params = SamplingParams(max_new_tokens=6, temperature=temperature)
    runs = [
        HFRolloutEngine(model, _Tokenizer(), torch.Generator().manual_seed(7), lean=lean).generate(PROMPTS * 4, params)
        for lean in (True, False)
    ]
    assert torch.equal(runs[0].response_ids, runs[1].response_ids)
    assert torch.equal(runs[0].response_mask, runs[1].response_mask)
    torch.testing.assert_close(runs[0].logprobs, runs[1].logprobs, atol=1e-5, rtol=0)


def lora(model, **options):
    """``model`` with LoRA on every projection, its adapters random (peft starts B at zero, which
    would fold to nothing and prove nothing)."""
    from peft import LoraConfig, get_peft_model

    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    config = LoraConfig(r=4, lora_alpha=8, target_modules=targets, init_lora_weights=False, **options)
    torch.manual_seed(1)
    return get_peft_model(model, config).eval()


def peft_logits(model, ids, mask):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask.long(), position_ids=position_ids_for(mask)).logits


def test_a_lora_model_is_decoded_with_its_adapters_folded_in():
    pytest.importorskip("peft")
    model = lora(build(ARCHITECTURES["llama-gqa-bias"]))
    ids, mask = left_pad(PROMPTS, pad_id=0)
    appended = torch.tensor([[3, 4], [7, 8], [11, 12], [15, 16]])
    decoder = lean_decoder_for(model, ids.shape[1] + 2)
    assert isinstance(decoder, LeanDecoder)
    lean = [decoder.prefill(ids, mask, max_new_tokens=2), decoder.decode(appended[:, 0])]

    full_ids, full_mask = torch.cat([ids, appended[:, :1]], 1), torch.cat([mask, torch.ones(4, 1, dtype=torch.bool)], 1)
    reference = peft_logits(model, full_ids, full_mask)
    with model.disable_adapter():
        without = peft_logits(model, full_ids, full_mask)
    width = ids.shape[1]
    for t, logits in enumerate(lean):
        torch.testing.assert_close(logits, reference[:, width - 1 + t], atol=1e-5, rtol=0)
    assert (reference - without).abs().max() > 1e-2  # the adapters change the logits: folding them is tested


def test_lora_the_decoder_cannot_fold_is_left_to_transformers():
    pytest.importorskip("peft")
    assert lean_decoder_for(lora(build(ARCHITECTURES["llama-gqa-bias"]), use_dora=True), 10) is None
    assert lean_decoder_for(lora(build(ARCHITECTURES["llama-gqa-bias"]), modules_to_save=["norm"]), 10) is None
