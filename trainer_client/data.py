"""Prompts: JSONL records (or a Python builder's), tokenised once, drawn in a seeded order.

A record is ``{"prompt": str | [{"role", "content"}], "reference": any, "verifier"?: spec,
"id"?: str, "metadata"?: {}}``. Chat prompts go through the tokenizer's chat template; plain
strings are tokenised as they are. The order of each epoch is a permutation seeded by
``(seed, epoch)``, so a :class:`PromptStream` is fully described by its :class:`StreamPosition`
and a resumed run draws exactly the prompts the uninterrupted one would have.
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizerBase

from .config import DataConfig

__all__ = [
    "DataError",
    "PromptRecord",
    "PromptStream",
    "PromptTokens",
    "StreamPosition",
    "load_records",
    "tokenize_prompt",
]


class DataError(ValueError):
    """A data file or builder produced something that is not a prompt record."""


@dataclass(frozen=True)
class PromptRecord:
    index: int
    prompt: str | list[dict[str, str]]
    reference: Any
    verifier: Any = None
    id: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class StreamPosition:
    epoch: int = 0
    offset: int = 0


def _record(index: int, raw: Any, where: str) -> PromptRecord:
    if not isinstance(raw, dict) or "prompt" not in raw:
        raise DataError(f"{where}: a record must be an object with a 'prompt' (got {str(raw)[:80]!r})")
    unknown = set(raw) - {"prompt", "reference", "verifier", "id", "metadata"}
    if unknown:
        raise DataError(f"{where}: unknown fields {sorted(unknown)}")
    return PromptRecord(
        index=index,
        prompt=raw["prompt"],
        reference=raw.get("reference"),
        verifier=raw.get("verifier"),
        id=None if raw.get("id") is None else str(raw["id"]),
        metadata=raw.get("metadata"),
    )


def _read_jsonl(path: str) -> list[Any]:
    rows = []
    with Path(path).open() as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return rows


def _call_builder(spec: str, split: str) -> Iterable[Any]:
    module_name, sep, attr = spec.partition(":")
    if not sep:
        raise DataError(f"data.builder {spec!r} must look like 'package.module:function'")
    try:
        builder = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise DataError(f"cannot import data.builder {spec!r}: {exc}") from exc
    return builder(split)


def load_records(cfg: DataConfig, split: str) -> list[PromptRecord]:
    """The records of ``split`` ("train" or "eval"); an empty list when the split is not configured."""
    if cfg.builder is not None:
        raw_rows = list(_call_builder(cfg.builder, split) or [])
        where = f"{cfg.builder}({split!r})"
    else:
        path = cfg.train if split == "train" else cfg.eval
        if path is None:
            return []
        raw_rows, where = _read_jsonl(path), path
    records = [_record(i, raw, f"{where} record {i}") for i, raw in enumerate(raw_rows)]
    if split == "train" and not records:
        raise DataError(f"{where}: no training prompts")
    return records


def tokenize_prompt(tokenizer: PreTrainedTokenizerBase, prompt: str | list[dict[str, str]], limit: int) -> list[int]:
    """Token ids of a prompt: chat messages through the chat template, strings as they are."""
    if isinstance(prompt, list):
        ids = tokenizer.apply_chat_template(prompt, tokenize=True, add_generation_prompt=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):  # newer transformers return a BatchEncoding
            ids = ids["input_ids"]
        ids = list(ids)
    else:
        ids = list(tokenizer(prompt)["input_ids"])
    if len(ids) > limit:
        raise DataError(f"prompt of {len(ids)} tokens exceeds data.max_prompt_tokens={limit}: {str(prompt)[:60]!r}...")
    return ids


class PromptTokens:
    """Token ids of each prompt, tokenised the first time it is drawn and reused every epoch after."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, limit: int) -> None:
        self.tokenizer = tokenizer
        self.limit = limit
        self._ids: dict[tuple[str, int], list[int]] = {}

    def __call__(self, split: str, record: PromptRecord) -> list[int]:
        key = (split, record.index)
        if key not in self._ids:
            self._ids[key] = tokenize_prompt(self.tokenizer, record.prompt, self.limit)
        return self._ids[key]


class PromptStream:
    """An endless, seeded, resumable sequence of training records."""

    def __init__(self, records: Sequence[PromptRecord], seed: int, shuffle: bool = True) -> None:
        if not records:
            raise DataError("no prompts to draw from")
        self.records = list(records)
        self.seed = seed
        self.shuffle = shuffle
        self.position = StreamPosition()

    def _order(self, epoch: int) -> list[int]:
        order = list(range(len(self.records)))
        if self.shuffle:
            random.Random(f"{self.seed}:{epoch}").shuffle(order)
        return order

    def take(self, count: int) -> list[PromptRecord]:
        """The next ``count`` records, crossing epoch boundaries as needed."""
        out: list[PromptRecord] = []
        epoch, offset = self.position.epoch, self.position.offset
        while len(out) < count:
            order = self._order(epoch)
            grab = order[offset : offset + count - len(out)]
            out.extend(self.records[i] for i in grab)
            offset += len(grab)
            if offset >= len(order):
                epoch, offset = epoch + 1, 0
        self.position = StreamPosition(epoch, offset)
        return out
