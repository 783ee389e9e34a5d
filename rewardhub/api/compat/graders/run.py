"""Grading one model output with an OpenAI-style grader, on rewardhub's verifiers.

Each grader maps onto a verifier and is scored on the same score path as ``/v1/score`` (plan,
admit, score, observe: :class:`rewardhub.api.pipeline.ScorePipeline`, handed in):

| grader | verifier |
| --- | --- |
| ``string_check`` | ``string_check`` (``operation``) |
| ``text_similarity`` | ``text_similarity`` (``metric``); ``cosine`` and ``meteor`` are refused (422) |
| ``score_model`` | ``judge`` in ``grade`` mode, the rendered messages as its prompt |
| ``python`` | ``grade(sample, item)`` in :mod:`rewardhub.sandbox`, called directly (:mod:`.python_grader`) |
| ``multi`` | its graders, then ``calculate_output`` over their scores (:mod:`.formula`) |

A grader that could not judge makes the answer's ``status`` non-``ok`` with its ``error``, and
``reward`` is then the failure score (0.0): read ``status`` before training on ``reward``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from rewardhub.api.pipeline import Admitted, ScorePipeline
from rewardhub.errors import InvalidRequest, UnknownVerifier
from rewardhub.messages import content_text
from rewardhub.types import ERROR, OK, ChatMessage, Result, Sample

from .formula import FormulaError, parse_formula
from .python_grader import run_python_grader
from .shapes import (
    MultiGrader,
    PythonGrader,
    RunGraderRequest,
    ScoreModelGrader,
    SimpleGrader,
    StringCheckGrader,
    TextSimilarityGrader,
)
from .templates import namespaces, render

__all__ = ["ERROR_FLAGS", "PYTHON_GRADER_TIMEOUT_S", "GraderRunner"]

PYTHON_GRADER_TIMEOUT_S = 30.0
"""Wall-clock limit of one python grader (the service's ``code_timeout_s`` when that is lower)."""

ERROR_FLAGS = (
    "formula_parse_error",
    "invalid_variable_error",
    "model_grader_parse_error",
    "model_grader_refusal_error",
    "model_grader_server_error",
    "other_error",
    "python_grader_runtime_error",
    "python_grader_server_error",
    "sample_parse_error",
    "truncated_observation_error",
    "unresponsive_reward_error",
)
"""``metadata.errors`` flags of OpenAI's answer; rewardhub sets the ones that apply."""


@dataclass
class _Plan:
    samples: dict[str, Sample] = field(default_factory=dict)  # grader name -> sample with its verifier
    python: dict[str, PythonGrader] = field(default_factory=dict)


class GraderRunner:
    """Grades on the service's score path; ``python`` graders run in the sandbox directly."""

    def __init__(self, score_path: ScorePipeline) -> None:
        self.score_path = score_path

    async def run(self, request: RunGraderRequest) -> dict[str, Any]:
        started = time.perf_counter()
        grader = request.grader
        scope = namespaces(request.model_sample, request.item)
        graders = grader.named_graders() if isinstance(grader, MultiGrader) else {grader.name: grader}
        formula = parse_formula(grader.calculate_output, set(graders)) if isinstance(grader, MultiGrader) else None
        plan = _plan(graders, scope)
        results = await self._score(plan, scope)
        if formula is None:
            reward_result = results[grader.name]
        else:
            reward_result = _combine(formula, results)
        return _answer(grader, reward_result, results, time.perf_counter() - started)

    async def _score(self, plan: _Plan, scope: dict[str, Any]) -> dict[str, Result]:
        """The verifier graders through the score path and the python graders in the sandbox, at once.

        The score path plans and admits the verifier graders before anything runs (a grader that
        needs a verifier this service lacks is a 404 before any python grader starts); python
        graders are bounded by the sandbox's own limit on waiting runs (429 past it).
        """
        names = list(plan.samples)
        admitted = self._admit([plan.samples[name] for name in names], names)
        settings = self.score_path.settings
        timeout_s = min(settings.code_timeout_s, PYTHON_GRADER_TIMEOUT_S)
        python_runs = [
            run_python_grader(g.source, scope["sample"], scope["item"], timeout_s, backend=settings.sandbox_backend)
            for g in plan.python.values()
        ]
        scored, python_results = await asyncio.gather(admitted.score(), asyncio.gather(*python_runs))
        scored = [_on_range(plan.samples[name], result) for name, result in zip(names, scored, strict=True)]
        return {**dict(zip(names, scored, strict=True)), **dict(zip(plan.python, python_results, strict=True))}

    def _admit(self, samples: list[Sample], names: list[str]) -> Admitted:
        try:
            return self.score_path.admit(samples, None)
        except UnknownVerifier as exc:
            index = (exc.detail or {}).get("sample_index", 0) if isinstance(exc.detail, dict) else 0
            raise UnknownVerifier(
                f"grader {names[index]!r} needs {exc.message.removeprefix('unknown verifier ')}, which this service does not have",
                detail=exc.detail,
            ) from None


def _plan(graders: dict[str, SimpleGrader], scope: dict[str, Any]) -> _Plan:
    plan = _Plan()
    for name, grader in graders.items():
        if isinstance(grader, PythonGrader):
            plan.python[name] = grader
        else:
            plan.samples[name] = _sample(grader, scope)
    return plan


def _sample(grader: SimpleGrader, scope: dict[str, Any]) -> Sample:
    if isinstance(grader, StringCheckGrader):
        return Sample(
            response=render(grader.input, scope),
            reference=render(grader.reference, scope),
            verifier={"name": "string_check", "config": {"operation": grader.operation}},
        )
    if isinstance(grader, TextSimilarityGrader):
        if grader.evaluation_metric in ("cosine", "meteor"):
            needs = "an embedding model" if grader.evaluation_metric == "cosine" else "the WordNet corpus"
            raise InvalidRequest(
                f"text_similarity metric {grader.evaluation_metric!r} needs {needs}, which this service does not have; "
                "use fuzzy_match, bleu, gleu or rouge_*",
                detail={"grader": grader.name, "error": "other_error"},
            )
        return Sample(
            response=render(grader.input, scope),
            reference=render(grader.reference, scope),
            verifier={"name": "text_similarity", "config": {"metric": grader.evaluation_metric}},
        )
    if isinstance(grader, ScoreModelGrader):
        return _judge_sample(grader, scope)
    raise InvalidRequest(f"grader type {grader.type!r} cannot be scored here")


def _judge_sample(grader: ScoreModelGrader, scope: dict[str, Any]) -> Sample:
    """``score_model`` as the ``judge`` verifier grading on the grader's range."""
    messages = [ChatMessage(role=m.role, content=render(content_text(m.content), scope)) for m in grader.input]
    system = "\n\n".join(m.content for m in messages if m.role in ("system", "developer"))
    prompt = [m for m in messages if m.role not in ("system", "developer")] or messages
    low, high = grader.range or (0.0, 1.0)
    if low >= high:
        raise InvalidRequest(f"score_model range must be [low, high] with low < high, got {[low, high]}")
    config: dict[str, Any] = {"mode": "grade", "model": grader.model}
    if float(low).is_integer() and float(high).is_integer() and high - low >= 2:
        config.update(scale=(int(low), int(high)), normalize=False)  # the judge grades on the range itself
    else:
        config.update(scale=(0, 10), normalize=True)  # mapped onto [low, high] below
    if system:
        config["system_prompt"] = system
    params = grader.sampling_params
    if "temperature" in params:
        config["temperature"] = params["temperature"]
    if params.get("max_completions_tokens") or params.get("max_tokens"):
        config["max_tokens"] = params.get("max_completions_tokens") or params.get("max_tokens")
    config.update(grader.judge_config)
    metadata = {"score_model_range": [low, high], "normalized": config.get("normalize", True)}
    return Sample(
        prompt=prompt,
        response=scope["sample"]["output_text"],
        reference=scope["item"] or None,
        verifier={"name": "judge", "config": config},
        metadata=metadata,
    )


def _on_range(sample: Sample, result: Result) -> Result:
    """A judge grade normalised to [0, 1] put back on the score_model's range."""
    if "score_model_range" not in sample.metadata or not sample.metadata["normalized"] or result.status != OK:
        return result
    low, high = sample.metadata["score_model_range"]
    return result.model_copy(update={"score": low + result.score * (high - low)})


def _combine(formula: Any, results: dict[str, Result]) -> Result:
    failed = next(((name, r) for name, r in results.items() if r.status != OK), None)
    if failed is not None:
        name, result = failed
        return Result.failed(f"grader {name!r}: {result.error}", status=result.status, score=0.0)
    try:
        return Result.ok(formula.evaluate({name: r.score for name, r in results.items()}))
    except FormulaError as exc:
        return Result.failed(str(exc), status=ERROR, error_kind="formula_error")


def _answer(grader: Any, result: Result, results: dict[str, Result], elapsed_s: float) -> dict[str, Any]:
    scores = {name: r.score for name, r in results.items()}
    errors: dict[str, Any] = dict.fromkeys(ERROR_FLAGS, False)
    for r in [result, *results.values()]:
        kind = r.details.get("error_kind")
        if r.status != OK:
            flag = kind if kind in errors else "other_error"
            errors[flag] = True
            errors.setdefault(f"{flag}_details", r.error)
    threshold = getattr(grader, "pass_threshold", None)
    return {
        "reward": result.score,
        "status": result.status,
        "error": result.error,
        "metadata": {
            "name": grader.name,
            "type": grader.type,
            "errors": errors,
            "execution_time": elapsed_s,
            "scores": scores,
            "passed": (result.status == OK and result.score >= threshold) if threshold is not None else None,
            "token_usage": None,
            "sampled_model_name": None,
        },
        "sub_rewards": scores if isinstance(grader, MultiGrader) else {},
        "model_grader_token_usage_per_model": {},
        "details": {name: r.model_dump(mode="json", exclude={"id"}) for name, r in results.items()},
    }
