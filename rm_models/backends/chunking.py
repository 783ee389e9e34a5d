"""Running a batch in chunks that fit: halve a chunk that runs out of GPU memory, and retry.

A micro-batch that fits on one request mix can run out of memory on another (a few very long
samples). Failing the whole batch would turn a capacity problem into errors for every sample in
it; retrying in halves, longest first, finds the size that fits with few wasted passes, and
only a single sequence that does not fit alone becomes an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from ..errors import BackendError

__all__ = ["run_in_chunks", "split_rows"]

T = TypeVar("T")


def run_in_chunks(
    order: Sequence[int],
    size: int,
    attempt: Callable[[list[int]], list[T]],
    release: Callable[..., None],
    describe: Callable[[list[int]], str],
) -> dict[int, T]:
    """``attempt`` on consecutive chunks of ``order`` of up to ``size`` items; {item: answer}.

    A chunk that runs out of GPU memory is retried in halves (and later chunks stay at the
    smaller size). The handler is left before ``release(force=True)`` empties the cache: while
    the exception is alive, its traceback keeps the failed chunk's tensors alive too. One item
    that still does not fit is a :class:`BackendError` naming it (``describe``).
    """
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    done: dict[int, T] = {}
    start = 0
    while start < len(order):
        rows = list(order[start : start + size])
        try:
            values: list[T] | None = attempt(rows)
        except torch.cuda.OutOfMemoryError:
            values = None
        if values is None:
            release(force=True)
            if len(rows) == 1:
                raise BackendError(f"out of GPU memory on {describe(rows)}")
            size = len(rows) // 2
            continue
        done.update(zip(rows, values, strict=True))
        start += len(rows)
    return done


def split_rows(flat: list[T], counts: Sequence[int]) -> list[list[T]]:
    """Cut ``flat`` into consecutive pieces of ``counts`` items."""
    if sum(counts) != len(flat):
        raise ValueError(f"{len(flat)} items cannot be cut into pieces of {list(counts)}")
    out, start = [], 0
    for count in counts:
        out.append(flat[start : start + count])
        start += count
    return out
