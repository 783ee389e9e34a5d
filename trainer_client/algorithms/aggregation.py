"""Loss aggregation: how per-token losses become one number, and how it splits into micro-batches.

Four modes, for a batch of B sequences with masks m_{i,t} (|o_i| = sum_t m_{i,t}):

    token_mean            sum_{i,t} m l / sum_{i,t} m                  (DAPO: long answers count per token)
    seq_mean_token_mean   (1/B) sum_i [sum_t m l / |o_i|]              (GRPO paper: every answer counts once)
    seq_mean_token_sum    (1/B) sum_i sum_t m l                        (the sum is not length-normalised)
    constant              sum_{i,t} m l / (B * L)                      (Dr. GRPO: L a fixed budget, no length bias)

The denominators are properties of the whole optimisation batch, so they are computed once by
:func:`normaliser_for` and handed to every micro-batch. Each micro-batch then returns its share
and the shares add up to the big-batch loss exactly: the gradient-accumulation bug where the loss
comes out scaled by the number of micro-batches (or weighted by micro-batch token counts) cannot
happen. See Liu et al. 2025 (arXiv:2503.20783) and Yu et al. 2025 (arXiv:2503.14476) for the
length biases of each mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import Tensor

__all__ = ["Aggregation", "Normaliser", "aggregate", "normaliser_for"]

Aggregation = Literal["token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant"]


@dataclass(frozen=True)
class Normaliser:
    """Denominators of the whole optimisation batch (not of a micro-batch)."""

    mode: Aggregation
    tokens: float
    """Unmasked tokens in the batch (token_mean)."""
    sequences: float
    """Sequences in the batch, masked ones included as in the papers (seq_mean_*, constant)."""
    constant_length: float
    """L of Dr. GRPO's B * L (constant mode): usually the generation budget."""


def normaliser_for(mask: Tensor, mode: Aggregation, constant_length: float | None = None) -> Normaliser:
    """The denominators of ``mode`` for the batch whose token mask is ``mask`` [B, T]."""
    return Normaliser(
        mode=mode,
        tokens=float(mask.sum().item()),
        sequences=float(mask.shape[0]),
        constant_length=float(constant_length if constant_length is not None else mask.shape[1]),
    )


def aggregate(loss: Tensor, mask: Tensor, norm: Normaliser) -> Tensor:
    """This (micro-)batch's share of the batch loss.  loss, mask: [b, T] -> scalar

    Summing the shares of all micro-batches of a batch gives ``aggregate(loss, mask, norm)`` of
    the whole batch, because every division uses the batch-wide denominators in ``norm``.
    """
    m = mask.to(loss.dtype)
    per_token = loss * m  # [b, T]
    if norm.mode == "token_mean":
        return per_token.sum() / max(norm.tokens, 1.0)
    if norm.mode == "seq_mean_token_mean":
        lengths = m.sum(-1).clamp(min=1.0)  # [b]
        return (per_token.sum(-1) / lengths).sum() / max(norm.sequences, 1.0)
    if norm.mode == "seq_mean_token_sum":
        return per_token.sum() / max(norm.sequences, 1.0)
    if norm.mode == "constant":
        return per_token.sum() / max(norm.sequences * norm.constant_length, 1.0)
    raise ValueError(f"unknown loss aggregation {norm.mode!r}")
