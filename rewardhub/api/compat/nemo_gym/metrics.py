"""NeMo-Gym's ``/aggregate_metrics``: statistics of a run's verify responses, named as NeMo-Gym names them.

NeMo-Gym's trainer and ``gym eval`` post ``{"verify_responses": [...]}`` (each a verify answer,
tagged with ``_ng_task_index`` and ``_ng_rollout_index``) and log the flat keys of the answer.
The numbers follow its reward profiler, so that a dashboard reads the same keys from rewardhub:

- every top-level number of a verify response (booleans as 0/1; keys starting with ``_`` are
  bookkeeping and skipped), plus the numbers of ``response.usage``, is a metric column;
- ``group_level_metrics``: per task, ``mean/``, ``max/``, ``min/``, ``median/`` and ``std/`` of each
  column (the sample standard deviation; 0 for a task with one rollout), with ``_ng_task_index``
  and ``num_rollouts``;
- ``agent_metrics``: the same statistics over all rollouts, plus ``num_repeats``;
- ``key_metrics``: the ``mean/`` entries;
- a masked response (``mask_sample: true``, which rewardhub sets for a sample it could not judge)
  is no measurement: it is left out of the statistics and counted under ``coverage/...``.

Not computed: the per-repeat confidence intervals and pass@k/majority@k tables that some NeMo-Gym
servers add (they override the profiler per benchmark), and ``perf_summary``.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

__all__ = ["TASK_INDEX", "ROLLOUT_INDEX", "aggregate_metrics", "describe"]

TASK_INDEX = "_ng_task_index"
ROLLOUT_INDEX = "_ng_rollout_index"
STATS = ("mean", "max", "min", "median", "std")


def aggregate_metrics(verify_responses: list[dict[str, Any]]) -> dict[str, Any]:
    """NeMo-Gym's ``AggregateMetrics`` body for these verify responses."""
    answer: dict[str, Any] = {"group_level_metrics": [], "agent_metrics": {}, "key_metrics": {}}
    if not verify_responses:
        return answer
    scored = [vr for vr in verify_responses if not vr.get("mask_sample")]
    coverage = _coverage(verify_responses, scored)
    if not scored:
        answer["agent_metrics"] = dict(coverage)
        answer["key_metrics"] = dict(coverage)
        return answer
    rows = [_numbers(vr) for vr in scored]
    by_task: dict[Any, list[dict[str, float]]] = defaultdict(list)
    for vr, row in zip(scored, rows, strict=True):
        by_task[vr.get(TASK_INDEX, 0)].append(row)
    for task in sorted(by_task):
        group = describe(by_task[task])
        group[TASK_INDEX] = task
        group["num_rollouts"] = len(by_task[task])
        answer["group_level_metrics"].append(group)
    agent = {**describe(rows), **coverage}
    agent["num_repeats"] = len({vr.get(ROLLOUT_INDEX, 0) for vr in verify_responses})
    answer["agent_metrics"] = agent
    answer["key_metrics"] = {**{k: v for k, v in agent.items() if k.startswith("mean/")}, **coverage}
    return answer


def describe(rows: list[dict[str, float]]) -> dict[str, float]:
    """``{stat}/{column}`` for each column: mean, max, min, median and sample std, missing values skipped.

    When no column has two values, std is 0 instead of undefined (one rollout does not vary).
    """
    columns = list(dict.fromkeys(name for row in rows for name in row))
    out: dict[str, float] = {}
    single = all(sum(name in row for row in rows) < 2 for name in columns)
    for name in columns:
        values = [row[name] for row in rows if name in row]
        out[f"mean/{name}"] = statistics.fmean(values)
        out[f"max/{name}"] = max(values)
        out[f"min/{name}"] = min(values)
        out[f"median/{name}"] = statistics.median(values)
        if len(values) > 1:
            out[f"std/{name}"] = statistics.stdev(values)
        elif single and len(values) == len(rows):
            out[f"std/{name}"] = 0.0
    return {key: value for key, value in out.items() if not math.isnan(value)}


def _numbers(verify_response: dict[str, Any]) -> dict[str, float]:
    usage = (verify_response.get("response") or {}).get("usage") or {}
    merged = {**verify_response, **usage} if isinstance(usage, dict) else verify_response
    return dict(_numeric_items(merged.items()))


def _numeric_items(items: Iterable[tuple[str, Any]]) -> Iterable[tuple[str, float]]:
    for key, value in items:
        if key.startswith("_") or key == "mask_sample":
            continue
        if isinstance(value, bool):
            yield key, int(value)
        elif isinstance(value, int | float) and math.isfinite(value):
            yield key, value


def _coverage(every: list[dict[str, Any]], scored: list[dict[str, Any]]) -> dict[str, int]:
    masked = len(every) - len(scored)
    if not masked:
        return {}
    tasks = {vr.get(TASK_INDEX, 0) for vr in every}
    measured = {vr.get(TASK_INDEX, 0) for vr in scored}
    return {
        "coverage/measured_rollouts": len(scored),
        "coverage/masked_rollouts": masked,
        "coverage/measured_tasks": len(measured),
        "coverage/fully_masked_tasks": len(tasks - measured),
    }
