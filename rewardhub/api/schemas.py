"""HTTP bodies of the v1 contract (API.md), as pydantic models that refuse unknown fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rewardhub.types import Result, Sample, VerifierSpec

__all__ = ["JobAccepted", "ScoreRequest", "ScoreResponse"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScoreRequest(_Body):
    verifier: VerifierSpec | None = None
    samples: list[Sample]
    run: str | None = None  # the training run these samples belong to (the operator page's per-run figures)
    cache: bool | None = None  # true: serve and store cached verdicts; false: never; unset: the cache_verifiers setting


class ScoreResponse(_Body):
    results: list[Result]
    elapsed_ms: float


class JobAccepted(_Body):
    job_id: str
