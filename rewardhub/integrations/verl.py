"""verl: ``compute_score`` functions that route by ``data_source`` to rewardhub verifiers.

verl loads a custom reward function by path and name and calls it per sample (its reward loop's
``naive`` manager, awaiting it when it is a coroutine function)::

    reward.custom_reward_function.path=pkg://rewardhub.integrations.verl
    reward.custom_reward_function.name=compute_score          # or compute_score_async

verl 0.9's reward loop has no ``batch`` manager (``reward.reward_manager.name=batch`` is refused);
``compute_score_batch`` is for the older ``BatchRewardManager`` class
(``verl.workers.reward_manager.batch``), which still calls it with whole batches.

The service is found at ``REWARDHUB_URL`` unless ``url`` is given (``reward_kwargs`` pass it, and
``verifier`` to score every sample with one spec instead of the routing table).

Each call returns a dict with the same keys for every sample, as verl's managers need:
``score`` (the reward; the verifier's failure score when it could not judge), ``acc`` (1.0 for an
``ok`` score of at least 1), ``status``, ``error``, the numeric ``status/...`` indicators and
``components`` (the composite's breakdown as JSON text). The batched variant adds one numeric
``component/<name>`` key per component found in the batch (NaN where a sample has none; see
:mod:`rewardhub.result_logs`). A ``data_source`` with no route raises, like verl's own
``default_compute_score``: no silent 0 for data nobody said how to judge.

**Multi-turn rollouts.** verl's reward managers merge an agent loop's extra fields
(``tool_extra_fields``) into ``extra_info``. When they carry the trajectory as ``messages`` (chat
messages with ``tool_calls`` and ``tool`` results), it is sent as the sample's ``messages`` and
scored as a conversation: text verifiers read its last assistant turn (not ``solution_str``, the
decoded tokens of every turn), ``tool_call`` the calls, judges the whole of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub.integrations.common import (
    as_reference,
    chat_messages,
    json_fields,
    service_spec,
    shared_async_client,
    shared_client,
)
from rewardhub.result_logs import batch_logs, sample_logs
from rewardhub.types import OK, Result, Sample, VerifierSpec

__all__ = [
    "DATA_SOURCE_PREFIXES",
    "DATA_SOURCE_ROUTES",
    "UnroutedDataSource",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "route",
]

DATA_SOURCE_ROUTES: dict[str, VerifierSpec] = {
    # verl's own examples/data_preprocess sources and those its default_compute_score knows
    "openai/gsm8k": "math",
    "gsm8k": "math",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "HuggingFaceH4/MATH-500": "math",
    "math": "math",
    "math_dapo": "math",
    "math_dapo_reasoning": "math",
    "hiyouga/geometry3k": "math",
    "deepscaler": "math",
    "olympiadbench": "math",
    "minerva": "math",
    "amc": "math",
    "omni_math": "math",
    "codecontests": "code",
    "apps": "code",
    "codeforces": "code",
    "taco": "code",
    "livecodebench": "code",
    "humaneval": "code",
    "mbpp": "code",
    "gpqa": "choice",
    "gpqa_diamond": "choice",
    "mmlu": "choice",
    "mmlu_pro": "choice",
    "ifeval": "ifeval",
}
"""Exact ``data_source`` names and the verifier each is scored by."""

DATA_SOURCE_PREFIXES: tuple[tuple[str, VerifierSpec], ...] = (
    ("aime", "math"),  # aime24, aime25, aime_2024, ...
    ("numina_", "math"),  # numina_aops_forum, numina_synthetic_math, numina_amc_aime, numina_cn_k12, ...
    ("searchR1_", "qa_match"),  # searchR1_nq, searchR1_hotpotqa, ...: exact match of the short answer
)
"""``data_source`` prefixes, tried in order after the exact names."""


class UnroutedDataSource(NotImplementedError):
    """No verifier is routed for this ``data_source`` (verl raises NotImplementedError too)."""


def route(data_source: str, routes: Mapping[str, Any] | None = None) -> VerifierSpec:
    """The verifier spec for ``data_source``: extra ``routes`` first, then the table, then prefixes."""
    for table in (routes or {}, DATA_SOURCE_ROUTES):
        if data_source in table:
            return table[data_source]
    for prefix, spec in DATA_SOURCE_PREFIXES:
        if data_source.startswith(prefix):
            return spec
    raise UnroutedDataSource(
        f"no rewardhub verifier for data_source={data_source!r}; pass verifier=... or routes={{...}} in reward_kwargs"
    )


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    url: str | None = None,
    verifier: Any = None,
    routes: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward function, answered by the service."""
    sample, spec = _sample(data_source, solution_str, ground_truth, extra_info, verifier, routes)
    [result] = shared_client(service_spec(url, api_key)).score([sample], spec)
    return verl_result(result)


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    url: str | None = None,
    verifier: Any = None,
    routes: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The async twin of :func:`compute_score` (verl awaits coroutine functions)."""
    sample, spec = _sample(data_source, solution_str, ground_truth, extra_info, verifier, routes)
    [result] = await shared_async_client(service_spec(url, api_key)).score([sample], spec)
    return verl_result(result)


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    url: str | None = None,
    verifier: Any = None,
    routes: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batched reward function (``reward_manager.name=batch``): one request for the batch."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(data_sources)
    planned = [
        _sample(source, solution, truth, info, verifier, routes)
        for source, solution, truth, info in zip(data_sources, solution_strs, ground_truths, infos, strict=True)
    ]
    # each sample carries its own spec: one request serves a batch that mixes data sources
    samples = [Sample.model_validate({**sample.model_dump(), "verifier": spec}) for sample, spec in planned]
    results = shared_client(service_spec(url, api_key)).score(samples) if samples else []
    components = {key: values for key, values in batch_logs(results).items() if key.startswith("component/")}
    return [
        {**verl_result(result), **{key: values[i] for key, values in components.items()}}
        for i, result in enumerate(results)
    ]


def verl_result(result: Result) -> dict[str, Any]:
    """The per-sample dict verl records: ``score`` plus fixed extra keys."""
    logs = sample_logs(result)
    return {
        "score": result.score,
        "acc": float(result.status == OK and result.score >= 1.0),
        "status": result.status,
        "error": result.error or "",
        **{key: logs[key] for key in logs if key.startswith("status/")},
        "components": json.dumps(result.details.get("components", {}), sort_keys=True, default=str),
    }


def _sample(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None,
    verifier: Any,
    routes: Mapping[str, Any] | None,
) -> tuple[Sample, Any]:
    spec = verifier if verifier is not None else route(data_source, routes)
    info = dict(extra_info or {})
    trajectory = info.pop("messages", None)
    metadata = {"data_source": data_source, **json_fields(info)}
    prompt = info.get("question") if isinstance(info.get("question"), str) else None
    reference = as_reference(ground_truth)
    if trajectory is not None:
        sample = Sample(prompt=prompt, messages=chat_messages(trajectory), reference=reference, metadata=metadata)
        return sample, spec
    return Sample(prompt=prompt, response=solution_str, reference=reference, metadata=metadata), spec
