"""Tiny random models and a character tokenizer, built locally: nothing is downloaded.

The tokenizer maps each printable character to one token and knows the special tokens the
verifiers look for (``<extra_0>`` for Qwen-style PRMs, ``ки`` for Math-Shepherd), with a
Qwen-like chat template. Models are 2-layer Qwen2 / Llama with random weights.
"""

from __future__ import annotations

import string
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForSequenceClassification,
    Qwen2ForTokenClassification,
)
from transformers.utils import logging as hf_logging

hf_logging.disable_progress_bar()
hf_logging.set_verbosity_error()

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tokenizer() -> PreTrainedTokenizerFast:
    vocab = {token: i for i, token in enumerate(["<pad>", "<unk>", "<s>", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>", "<extra_0>"],
    )
    fast.add_tokens(["ки"])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _qwen(tokenizer: PreTrainedTokenizerFast, num_labels: int, initializer_range: float) -> Qwen2Config:
    return Qwen2Config(
        initializer_range=initializer_range,
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=num_labels,
    )


def _llama(tokenizer: PreTrainedTokenizerFast, initializer_range: float) -> LlamaConfig:
    return LlamaConfig(
        initializer_range=initializer_range,
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )


def save(model: torch.nn.Module, tokenizer: PreTrainedTokenizerFast, path: Path) -> str:
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def build_models(root: Path, initializer_range: float = 0.02) -> dict[str, str]:
    """Paths of: outcome RM, Qwen PRM, causal LM, an identical copy of it, and another causal LM.

    At the default initialisation the outputs are nearly uniform (every step probability near
    0.5, every next token nearly tied); a larger ``initializer_range`` makes them differ by
    far more than bfloat16 round-off, which is what the device tests compare across.
    """
    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    paths = {
        "outcome": save(
            Qwen2ForSequenceClassification(_qwen(tokenizer, 1, initializer_range)), tokenizer, root / "outcome"
        ),
        "prm": save(Qwen2ForTokenClassification(_qwen(tokenizer, 2, initializer_range)), tokenizer, root / "prm"),
    }
    causal = LlamaForCausalLM(_llama(tokenizer, initializer_range))
    paths["causal"] = save(causal, tokenizer, root / "causal")
    paths["causal_copy"] = save(causal, tokenizer, root / "causal_copy")
    torch.manual_seed(1)
    paths["causal_other"] = save(
        LlamaForCausalLM(_llama(tokenizer, initializer_range)), tokenizer, root / "causal_other"
    )
    return paths
