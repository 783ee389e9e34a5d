"""Stored samples and the verdicts they got, read from the files a team has at hand.

Each line of a JSONL file is one of:

- **a sample with its result** (``POST /v1/reverify``'s shape): sample fields and ``"result"``;
- **a row of the trainer's dumps** (``debug/step_NNNNNN.jsonl``): ``prompt``, ``response``,
  ``reference``, ``group`` and ``reward_score``, ``reward_status``, ``reward_error``,
  ``reward_details`` (with the verdict key), ``reward_steps``;
- **an entry of the operator page's sample store** (``GET /ui/api/samples/{key}``): ``sample``
  and ``result`` (texts there are clipped to ``ui_sample_chars``: a clipped response may flip);
- **a line of ``rewardhub score``'s output**: a bare result, joined by ``id`` to the sample file
  it was scored from (``--samples``; ``rewardhub score`` numbers samples without an id from 1);
- **a bare sample**: no old verdict, so the old side must come from ``--against``.

A line that is none of these is an error naming its line; nothing is skipped silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rewardhub.errors import InvalidRequest, RewardhubError
from rewardhub.types import Result, Sample

__all__ = ["Stored", "jsonl_objects", "read_stored", "stored_from_json"]

SAMPLE_FIELDS = set(Sample.model_fields)
DUMP_FIELDS = {"prompt", "response", "reference", "group"}


@dataclass(frozen=True)
class Stored:
    """One stored sample and the verdict it got then (None: not stored)."""

    sample: Sample
    old: Result | None
    where: str  # file:line, for messages


def stored_from_json(raw: dict[str, Any], where: str) -> Stored:
    """One line's sample and old verdict, whichever of the shapes above it has."""
    if "reward_status" in raw or "reward_score" in raw:
        sample = {k: raw[k] for k in DUMP_FIELDS if raw.get(k) is not None}
        sample["id"] = f"step{raw.get('step', '?')}-{raw.get('index', '?')}"
        result = {
            "score": raw.get("reward_score"),
            "status": raw.get("reward_status", "ok"),
            "error": raw.get("reward_error"),
            "details": raw.get("reward_details") or {},
            "steps": raw.get("reward_steps"),
        }
        return _stored(sample, result, where)
    if isinstance(raw.get("sample"), dict):  # the operator page's store
        return _stored(raw["sample"], raw.get("result"), where)
    if "result" in raw:
        return _stored({k: v for k, v in raw.items() if k != "result"}, raw["result"], where)
    if "response" not in raw and "messages" not in raw and "score" in raw and "status" in raw:
        raise InvalidRequest(
            f"{where}: a bare result (rewardhub score's output): pass the file it was scored from with --samples"
        )
    return _stored(raw, None, where)


def read_stored(path: Path, samples_path: Path | None = None) -> list[Stored]:
    """Every line of ``path``; bare results are joined by id to the samples of ``samples_path``."""
    rows = list(jsonl_objects(path))
    if samples_path is None:
        return [stored_from_json(raw, where) for raw, where in rows]
    samples = {}
    for number, (raw, where) in enumerate(jsonl_objects(samples_path), 1):
        raw.setdefault("id", str(number))  # as rewardhub score numbers them
        extra = {k: raw.pop(k) for k in list(raw) if k not in SAMPLE_FIELDS}
        if extra:
            raw["metadata"] = {**raw.get("metadata", {}), **extra}
        samples[str(raw["id"])] = (raw, where)
    out = []
    for raw, where in rows:
        key = str(raw.get("id"))
        if key not in samples:
            raise InvalidRequest(f"{where}: result id {key!r} is not among the samples of {samples_path}")
        out.append(_stored(samples[key][0], raw, where))
    return out


def jsonl_objects(path: Path) -> Iterable[tuple[dict[str, Any], str]]:
    """Each non-blank line of a JSONL file as an object, with ``path:line`` for messages; a line that
    is not a JSON object is an InvalidRequest naming it (audit cases and stored samples alike)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RewardhubError(f"cannot read {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidRequest(f"{where}: not JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise InvalidRequest(f"{where}: a line is a JSON object")
        yield raw, where


def _stored(sample: dict[str, Any], result: Any, where: str) -> Stored:
    sample = dict(sample)
    sample.pop("verifier", None)  # the spec under test decides, not the one stored
    extra = {k: sample.pop(k) for k in list(sample) if k not in SAMPLE_FIELDS}
    if extra:
        sample["metadata"] = {**(sample.get("metadata") or {}), **extra}
    try:
        parsed = Sample.model_validate(sample)
        old = None if result is None else Result.model_validate(result)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"])
        raise InvalidRequest(f"{where}: {field + ': ' if field else ''}{error['msg']}") from None
    return Stored(parsed, old, where)
