"""The shape every verifier has: a ``name``, a ``kind``, a pydantic ``Config`` and ``score``.

A verifier is a small class. Its ``Config`` is validated once per request (so a bad config is a
422 before any work starts) and its JSON schema is what ``GET /v1/verifiers`` shows. ``score``
returns a :class:`~rewardhub.types.Result` (or a bare float for "ok with this score") and may
raise :class:`~rewardhub.errors.VerifierError` to report that it could not judge the sample.

Verifiers never know where they run: the execution layer calls ``score_batch`` (whose default
scores each sample with ``score``; model verifiers override it to batch on the device) or
``score_group``, in a worker process, a Celery worker or, for ``inline`` verifiers, in place,
always through :func:`rewardhub.calls.run_call`.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from rewardhub.types import Result, Sample, VerifierKind

__all__ = ["Verifier", "VerifierConfig", "as_result"]


class VerifierConfig(BaseModel):
    """Fields every verifier's config has. Subclass it as the verifier's nested ``Config``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    failure_score: float = Field(
        0.0, description="Score reported with a timeout or error status (trainers should mask these)."
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Hard wall-clock limit per sample; the server's default when unset, capped by its maximum.",
    )


class Verifier:
    """Base class of all verifiers. Subclasses set ``name`` and override ``score``."""

    name: ClassVar[str]
    kind: ClassVar[VerifierKind] = "rule"
    description: ClassVar[str] = ""
    inline: ClassVar[bool] = False
    """Cheap and bounded enough to run in the API process without a pool round trip."""

    Config: ClassVar[type[VerifierConfig]] = VerifierConfig

    def score(self, sample: Sample, config: Any) -> Result | float:
        raise NotImplementedError(f"verifier {self.name!r} does not implement score()")

    def score_batch(self, samples: list[Sample], config: Any) -> list[Result | float]:
        """Score many samples; model verifiers override this to batch on the device."""
        return [self.score(sample, config) for sample in samples]

    def score_group(self, samples: list[Sample], config: Any) -> list[Result | float]:
        """Group verifiers (kind ``group``) score all samples of one group together."""
        raise NotImplementedError(f"verifier {self.name!r} is not a group verifier")

    @classmethod
    def warm_up(cls) -> None:
        """Build, once, the lazy state every worker would otherwise build on its first samples.

        Called in the worker pools' fork server before any worker exists (see
        :mod:`rewardhub.execution.warm_up`): the imports, parser tables and caches filled here are
        inherited by every worker, including a fresh one that replaces a killed worker. Default:
        nothing to warm.
        """

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "kind": cls.kind,
            "description": cls.description or _first_paragraph(inspect.getdoc(cls)),
            "config_schema": cls.Config.model_json_schema(),
        }


def as_result(value: Result | float | int | bool) -> Result:
    """Verifiers may return a bare number for "ok with this score"."""
    if isinstance(value, Result):
        return value
    return Result.ok(float(value))


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")
