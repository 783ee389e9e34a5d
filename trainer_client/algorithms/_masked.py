"""Masked reductions shared by the estimators: a padded token or a masked sample counts for nothing."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["masked_mean", "masked_sum", "masked_whiten"]


def masked_sum(values: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    masked = values * mask.to(values.dtype)
    return masked.sum() if dim is None else masked.sum(dim)


def masked_mean(values: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    """Mean over the positions where ``mask`` is true; 0 (not NaN) where nothing is counted."""
    count = mask.to(values.dtype).sum() if dim is None else mask.to(values.dtype).sum(dim)
    return masked_sum(values, mask, dim) / count.clamp(min=1.0)


def masked_whiten(values: Tensor, mask: Tensor, eps: float = 1e-8) -> Tensor:
    """(x - mean) / std over the masked positions, 0 elsewhere (the unbiased std, as PyTorch's)."""
    mean = masked_mean(values, mask)
    count = mask.to(values.dtype).sum()
    var = masked_sum((values - mean) ** 2, mask) / (count - 1).clamp(min=1.0)
    return torch.where(mask.bool(), (values - mean) / (var.sqrt() + eps), torch.zeros_like(values))
