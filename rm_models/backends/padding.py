"""Padding token lists into one batch, on the side each kind of model call needs.

- **Right** for scoring (reward heads, step probabilities, log-probabilities): every real token
  keeps position 0, 1, 2, ... exactly as when the sequence runs alone, and each row is read at
  its own positions, so padding never changes a score.
- **Left** for generation: every row's last prompt token sits in the last column, so the next
  token of every row is predicted from the same column and new tokens are appended side by
  side; ``generate`` derives positions from the attention mask, so the pads shift nothing.

Also the order chunks are built in: longest first, so each chunk pads to a similar length and
an out-of-memory error, if any, comes on the first chunk rather than after work was done.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["left_pad", "longest_first", "right_pad"]


def longest_first(rows: Sequence[Sequence[int]]) -> list[int]:
    """Indices of ``rows`` from the longest to the shortest (ties keep their order)."""
    return sorted(range(len(rows)), key=lambda i: len(rows[i]), reverse=True)


def right_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Tensor, Tensor]:
    """(ids [B, L] long, attention mask [B, L] long), real tokens first in every row."""
    width = max((len(r) for r in rows), default=0)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, seq in enumerate(rows):
        ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Tensor, Tensor]:
    """(ids [B, L] long, attention mask [B, L] long), real tokens last in every row."""
    width = max((len(r) for r in rows), default=0)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, seq in enumerate(rows):
        if seq:
            ids[row, width - len(seq) :] = torch.tensor(list(seq), dtype=torch.long)
            mask[row, width - len(seq) :] = 1
    return ids, mask
