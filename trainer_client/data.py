"""Prompts: JSONL records (or a Python builder's), tokenised once, drawn in a seeded order.

A record is ``{"prompt": str | [{"role", "content"}], "reference": any, "verifier"?: spec,
"id"?: str, "metadata"?: {}}``. Chat prompts go through the tokenizer's chat template; plain
strings are tokenised as they are. The order of each epoch is a permutation seeded by
``(seed, epoch)``, so a :class:`PromptStream` is fully described by its :class:`StreamPosition`
and a resumed run draws exactly the prompts the uninterrupted one would have.

``data.weak_tasks`` names the report of ``rewardhub audit code --mutants``: the problems whose
tests accept a reference solution broken in one place, where a policy is paid for wrong
programs. Their training records (matched by ``id``) are dropped, or with ``weak_tasks_weight``
w in (0, 1) kept at weight w: each epoch draws each of them with probability w, seeded by
``(seed, epoch)`` as the order is, so resumes still see the same prompts.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
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
    "weak_task_ids",
    "without_weak_tasks",
]

log = logging.getLogger("rewardhub.trainer")


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
    weight: float = 1.0
    """The chance the record is drawn in an epoch (below 1 for a down-weighted weak task)."""


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
    if split == "train" and cfg.weak_tasks is not None:
        records = without_weak_tasks(records, weak_task_ids(cfg.weak_tasks), cfg.weak_tasks_weight, where)
    if split == "train" and not records:
        raise DataError(f"{where}: no training prompts")
    return records


def weak_task_ids(path: str) -> set[str]:
    """The ids in an audit report (``rewardhub audit code --mutants ... --report FILE``)."""
    ids = set()
    for number, row in enumerate(_read_jsonl(path), 1):
        if not isinstance(row, dict) or row.get("id") is None:
            raise DataError(f"{path}:{number}: a weak-task line needs an 'id'")
        ids.add(str(row["id"]))
    return ids


def without_weak_tasks(records: list[PromptRecord], ids: set[str], weight: float, where: str) -> list[PromptRecord]:
    """``records`` without the weak tasks (``weight`` 0), or with them at ``weight``."""
    if ids and any(record.id is None for record in records):
        raise DataError(f"{where}: data.weak_tasks matches records by id, and some records have none")
    weak = [record for record in records if record.id in ids]
    log.info("data.weak_tasks: %d of %d training records are weak tasks (weight %g)", len(weak), len(records), weight)
    if weight == 0.0:
        return [record for record in records if record.id not in ids]
    return [dataclasses.replace(r, weight=weight) if r.id in ids else r for r in records]


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
        if any(record.weight < 1.0 for record in self.records):  # a down-weighted record is drawn with its weight
            draw = random.Random(f"{self.seed}:{epoch}:weights")
            chances = [draw.random() for _ in self.records]
            order = [i for i in order if chances[i] < self.records[i].weight]
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
