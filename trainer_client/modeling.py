"""The policy: a tiny Qwen2-style model built from scratch, or a pretrained causal LM from disk.

Also the two structural options that act on the model rather than on the loss: LoRA adapters
(peft, optional) and freezing an MoE router, which practitioners report as a cheap stabiliser of
RL on mixture-of-experts models (the router's discrete choices amplify train-inference mismatch).
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase, Qwen2Config

from .char_tokenizer import build_char_tokenizer
from .config import ModelConfig

__all__ = [
    "ROUTER_PATTERN",
    "build_toy_model",
    "freeze_router",
    "frozen_copy",
    "load_policy",
    "load_tokenizer",
    "resolve_model_path",
]

KIT_MANIFEST = "rewardhub-model.json"
"""What ``rewardhub models install`` writes last in a model's folder: its presence means a complete install."""

ROUTER_PATTERN = r"(^|\.)(mlp\.gate|block_sparse_moe\.gate|router|mlp\.router|gate\.wg)(\.|$)"
"""Parameter names of MoE routers in the common architectures (Qwen-MoE, Mixtral, DeepSeek, OLMoE)."""


def build_toy_model(cfg: ModelConfig, tokenizer: PreTrainedTokenizerBase, seed: int) -> PreTrainedModel:
    """A randomly initialised Qwen2 decoder sized by ``cfg.toy``; the seed fixes the weights."""
    toy = cfg.toy
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=toy.hidden_size,
        intermediate_size=toy.intermediate_size,
        num_hidden_layers=toy.num_layers,
        num_attention_heads=toy.num_heads,
        num_key_value_heads=toy.num_heads,
        max_position_embeddings=toy.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config._attn_implementation = cfg.attn_implementation
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config)
    return model


def resolve_model_path(path: str) -> str:
    """A model kit name to its folder (``$REWARDHUB_MODELS_DIR/NAME``, default ``~/.cache/rewardhub/models``);
    a folder or an ``owner/name`` hub id unchanged.

    The trainer talks to rewardhub only through the client surface (tests/test_layering.py), so it reads the
    kit's folder convention here instead of importing ``rewardhub.models.kit``. A bare name that is neither
    a folder nor an installed model is an error that says how to install it, not a download attempt.
    """
    if Path(path).is_dir() or "/" in path:
        return path
    configured = os.environ.get("REWARDHUB_MODELS_DIR")
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "rewardhub" / "models"
    if (root / path / KIT_MANIFEST).is_file():
        return str(root / path)
    raise FileNotFoundError(
        f"model.path {path!r} is neither a folder nor an installed kit model: run `rewardhub models install {path}`"
        f" (looked in {root / path})"
    )


def load_tokenizer(cfg: ModelConfig) -> PreTrainedTokenizerBase:
    """The toy character tokenizer, or the pretrained model's (left padding, a pad token)."""
    if cfg.path is None:
        tokenizer = build_char_tokenizer(cfg.toy.alphabet)
    else:
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(cfg.path), trust_remote_code=cfg.trust_remote_code)
        tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_policy(cfg: ModelConfig, seed: int) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The policy and its tokenizer, with the router frozen and LoRA applied when asked."""
    tokenizer = load_tokenizer(cfg)
    if cfg.path is None:
        model = build_toy_model(cfg, tokenizer, seed)
    else:
        model = AutoModelForCausalLM.from_pretrained(
            resolve_model_path(cfg.path),
            dtype=getattr(torch, cfg.dtype),
            attn_implementation=cfg.attn_implementation,
            trust_remote_code=cfg.trust_remote_code,
        )
    if cfg.freeze_router:
        freeze_router(model)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if cfg.lora is not None:
        model = _apply_lora(model, cfg)
    return model, tokenizer


def freeze_router(model: torch.nn.Module, pattern: str = ROUTER_PATTERN) -> list[str]:
    """Stop gradients to every router parameter; returns their names (empty for a dense model)."""
    frozen = []
    for name, param in model.named_parameters():
        if re.search(pattern, name):
            param.requires_grad_(False)
            frozen.append(name)
    return frozen


def frozen_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A reference policy: a deep copy with gradients off, in eval mode."""
    ref = copy.deepcopy(model)
    ref.eval()
    for param in ref.parameters():
        param.requires_grad_(False)
    return ref


def _apply_lora(model: PreTrainedModel, cfg: ModelConfig) -> PreTrainedModel:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:  # an optional feature: say what to install
        raise ImportError("model.lora needs peft: pip install peft") from exc
    assert cfg.lora is not None
    lora = LoraConfig(
        r=cfg.lora.rank,
        lora_alpha=cfg.lora.alpha,
        lora_dropout=cfg.lora.dropout,
        target_modules=list(cfg.lora.target_modules),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)
