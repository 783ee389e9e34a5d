"""What a result contributes to a trainer's logs: numbers under stable names.

Trainers log per-sample extras by turning them into tensors (OpenRLHF calls ``torch.as_tensor``
on every ``extra_logs`` list, verl averages every numeric ``reward_extra_info`` key, TRL's
``log_metric`` takes floats), so a string there crashes the run and a key present for one sample
but not the next breaks the batch. Everything here is therefore a float, and a batch gets one list
per key with the same length as the batch.

| key | meaning |
| --- | --- |
| ``status/ok``, ``status/timeout``, ``status/error`` | 1.0 for the sample's status, else 0.0 (their means are rates) |
| ``component/<name>`` | score of one component of a composite (``sum``/``gate``); nested ones as ``component/<outer>/<inner>`` |

A component a sample does not have (its spec differs from the batch's others) is NaN, never 0:
absent is not the same as wrong. JSON has no NaN, so answers sent over HTTP keep only the keys
every sample of the batch has (``shared_only``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub.types import STATUSES, Result

__all__ = ["STATUS_KEYS", "batch_logs", "component_scores", "sample_logs"]

STATUS_KEYS = tuple(f"status/{status}" for status in STATUSES)
MAX_COMPONENT_DEPTH = 8


def sample_logs(result: Result) -> dict[str, float]:
    """Status indicators and component scores of one result."""
    logs = {f"status/{status}": float(result.status == status) for status in STATUSES}
    logs.update(component_scores(result.details))
    return logs


def component_scores(details: Mapping[str, Any], prefix: str = "component/", depth: int = 0) -> dict[str, float]:
    """``details["components"]`` (as built by :func:`rewardhub.compose.combine`) flattened to scores."""
    components = details.get("components")
    if not isinstance(components, Mapping) or depth > MAX_COMPONENT_DEPTH:
        return {}
    out: dict[str, float] = {}
    for label, entry in components.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("score"), int | float):
            continue
        key = f"{prefix}{label}"
        out[key] = float(entry["score"])
        inner = entry.get("details")
        if isinstance(inner, Mapping):
            out.update(component_scores(inner, prefix=f"{key}/", depth=depth + 1))
    return out


def batch_logs(results: Sequence[Result], shared_only: bool = False) -> dict[str, list[float]]:
    """One list per key, aligned with ``results``; keys in first-seen order, NaN where absent.

    ``shared_only`` keeps just the keys every result has, so no NaN is needed.
    """
    per_sample = [sample_logs(result) for result in results]
    keys: dict[str, None] = dict.fromkeys(STATUS_KEYS)
    for logs in per_sample:
        keys.update(dict.fromkeys(logs))
    if shared_only:
        keys = {key: None for key in keys if all(key in logs for logs in per_sample)}
    return {key: [logs.get(key, math.nan) for logs in per_sample] for key in keys}
