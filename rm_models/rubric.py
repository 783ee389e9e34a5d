"""``rubric``: Rubrics-as-Rewards, a response judged against weighted natural-language criteria.

The sample's ``reference`` is the rubric: a list of ``{"criterion": str, "weight": float}`` (or
``{"criteria": [...]}``); negative weights mark pitfalls. Two modes (Gunjal et al., 2025,
arXiv 2507.17746):

- ``explicit``: one judge call per criterion, c_j ∈ {0, 1} (or P(True) with ``logprobs``),
  score Σ w_j c_j / Σ |w_j|, each criterion's verdict in ``details.criteria``;
- ``implicit``: one call with the whole rubric, a grade on ``scale`` normalised to [0, 1].

A sample with ``messages`` is judged as a conversation: the judge reads every turn, the calls and
the tool outputs, marked untrusted (see :mod:`rewardhub.models.transcript`). Empty and
reasoning-opener responses score 0 without a judge call. It does not invent a rubric
when none is given: a missing or malformed rubric is an error status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample, VerifierKind

from .backends import Backend, ChatReply, ChatRequest, using_backend
from .base import ModelVerifier, score_prepared, with_model
from .config import JudgeConfig, backend_spec
from .hardening import is_master_key
from .judge_prompts import (
    CONVERSATION_RUBRIC_CRITERION_TEMPLATE,
    CONVERSATION_RUBRIC_IMPLICIT_TEMPLATE,
    RUBRIC_CRITERION_TEMPLATE,
    RUBRIC_IMPLICIT_TEMPLATE,
)
from .judging import binary_request, grade_request, read_binary, read_grade
from .scoring import rubric_explicit_score
from .transcript import render_conversation

__all__ = ["Criterion", "RubricJudge", "parse_rubric"]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion: str = Field(
        min_length=1, description="What the response should (or, with a negative weight, should not) do."
    )
    weight: float = Field(1.0, description="Importance; negative for a pitfall.")


_RUBRIC = TypeAdapter(list[Criterion])


@dataclass(frozen=True)
class _Asked:
    criteria: list[Criterion]
    requests: list[ChatRequest]


class RubricJudge(ModelVerifier):
    """Rubric judge: weighted criteria checked one by one (explicit) or all at once (implicit)."""

    name: ClassVar[str] = "rubric"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "judge"

    class Config(JudgeConfig):
        mode: Literal["explicit", "implicit"] = Field(
            "explicit",
            description="`explicit`: one verdict per criterion, Σ w c / Σ|w|; `implicit`: one holistic grade.",
        )
        scale: tuple[int, int] = Field((1, 10), description="`implicit`: lowest and highest grade.")

        @model_validator(mode="after")
        def _check(self) -> RubricJudge.Config:
            low, high = self.scale
            if low >= high:
                raise ValueError("scale must be (low, high) with low < high")
            if self.mode == "implicit" and self.verdict == "logprobs" and not (0 <= low and high <= 9):
                raise ValueError("grading by log-probabilities needs single-digit grades: a scale within (0, 9)")
            return self

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        with using_backend(backend_spec(config)) as backend:
            return self._score(backend, samples, config)

    def _score(self, backend: Backend, samples: list[Sample], config: Config) -> list[Result | float]:
        def prepare(sample: Sample) -> _Asked | Result:
            criteria = parse_rubric(sample.reference)
            if is_master_key(sample.response):
                return Result.ok(0.0, short_circuit="master_key")
            if sample.messages is not None:  # a trajectory: all of it, tool outputs marked untrusted
                values = {"CONVERSATION": render_conversation(sample)}
                per_criterion, implicit = CONVERSATION_RUBRIC_CRITERION_TEMPLATE, CONVERSATION_RUBRIC_IMPLICIT_TEMPLATE
            else:
                values = {"QUESTION": sample.prompt_text(), "RESPONSE": sample.response}
                per_criterion, implicit = RUBRIC_CRITERION_TEMPLATE, RUBRIC_IMPLICIT_TEMPLATE
            if config.mode == "explicit":
                requests = [
                    binary_request(per_criterion, {**values, "CRITERION": c.criterion}, config) for c in criteria
                ]
            else:
                rubric = "\n".join(f"- (weight {c.weight:+g}) {c.criterion}" for c in criteria)
                requests = [grade_request(implicit, {**values, "RUBRIC": rubric}, config, *config.scale)]
            return _Asked(criteria, requests)

        def run(batch: list[_Asked]) -> list[Result]:
            replies = iter(backend.chat([r for asked in batch for r in asked.requests]))  # one round trip for all
            return [_result(asked, [next(replies) for _ in asked.requests], config) for asked in batch]

        return list(with_model(score_prepared(samples, config.failure_score, prepare, run), backend, config))


def parse_rubric(reference: Any) -> list[Criterion]:
    """The rubric of a sample's reference; a missing or malformed one is the sample's error."""
    if isinstance(reference, dict) and set(reference) == {"criteria"}:
        reference = reference["criteria"]
    try:
        criteria = _RUBRIC.validate_python(reference)
    except ValidationError as exc:
        raise VerifierError(
            f"reference is not a rubric (a list of {{criterion, weight}}): {exc.errors()[0]['msg']}"
        ) from None
    if not criteria or all(c.weight == 0 for c in criteria):
        raise VerifierError("a rubric needs at least one criterion with a non-zero weight")
    return criteria


def _result(asked: _Asked, replies: list[ChatReply | Exception], config: RubricJudge.Config) -> Result:
    try:
        values = []
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply if isinstance(reply, VerifierError) else VerifierError(str(reply))
            values.append(
                read_binary(reply, config) if config.mode == "explicit" else read_grade(reply, config, *config.scale)
            )
    except VerifierError as exc:
        where = f"criterion {len(values) + 1}: " if config.mode == "explicit" else ""
        return Result.failed(where + exc.message, score=config.failure_score)
    listed = [{"criterion": c.criterion, "weight": c.weight} for c in asked.criteria]
    if config.mode == "implicit":
        low, high = config.scale
        return Result.ok((values[0] - low) / (high - low), mode="implicit", grade=values[0], criteria=listed)
    for entry, satisfied in zip(listed, values, strict=True):
        entry["satisfied"] = satisfied
    weights = [c.weight for c in asked.criteria]
    return Result.ok(rubric_explicit_score(weights, values), mode="explicit", criteria=listed)
