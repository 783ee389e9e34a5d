"""The optimizer and the learning-rate schedule.

Weight decay applies to matrices only (linear layers, embeddings), never to norm gains or
biases: decaying the final norm's gain shrinks every logit, so the policy could never become
confident, which on the toy task shows up as a sampled accuracy stuck well below the greedy one.
Decaying the matrices is what pushes a small model from memorising its training prompts towards
a rule that also holds for held-out ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .config import OptimConfig

__all__ = ["build_optimizer", "build_scheduler", "lr_factor"]


def build_optimizer(model: torch.nn.Module, cfg: OptimConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    params = [g for g in groups if g["params"]]
    # the fused kernel is one call per step instead of one per tensor: it matters for small models
    fused = all(p.dtype in _FUSED_DTYPES and p.device.type in {"cpu", "cuda"} for g in params for p in g["params"])
    return torch.optim.AdamW(params, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, fused=fused)


_FUSED_DTYPES = {torch.float32, torch.float16, torch.bfloat16}


def lr_factor(cfg: OptimConfig, total_steps: int) -> Callable[[int], float]:
    """Multiplier of the learning rate after ``step`` completed steps: linear warm-up, then decay."""
    warmup, kind = cfg.warmup_steps, cfg.schedule

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        progress = min((step - warmup) / max(1, total_steps - warmup), 1.0)
        if kind == "cosine":
            return 0.5 * (1.0 + math.cos(math.pi * progress))
        if kind == "linear":
            return 1.0 - progress
        return 1.0

    return factor


def build_scheduler(
    optimizer: torch.optim.Optimizer, cfg: OptimConfig, total_steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor(cfg, total_steps))
