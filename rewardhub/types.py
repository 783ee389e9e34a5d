"""The one vocabulary every part of rewardhub speaks.

A *sample* is what gets scored, a *result* is what comes back, and a *verifier spec* says which
verifier (or which combination of verifiers) does the scoring. These are the same shapes the HTTP
contract (API.md) uses, so a sample travels unchanged from the trainer to the worker and back.

This module imports nothing of ours: everything else imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ERROR",
    "OK",
    "TIMEOUT",
    "STATUSES",
    "ChatMessage",
    "Gate",
    "Result",
    "Sample",
    "Status",
    "VerifierKind",
    "VerifierRef",
    "VerifierSpec",
    "WeightedSum",
    "WeightedTerm",
    "verifier_label",
]

Status = Literal["ok", "timeout", "error"]
"""Outcome of scoring one sample. Anything but ``ok`` means "no judgement": mask it, never train on it."""

OK: Status = "ok"
TIMEOUT: Status = "timeout"
ERROR: Status = "error"
STATUSES: tuple[Status, ...] = (OK, TIMEOUT, ERROR)

VerifierKind = Literal["rule", "code", "model", "judge", "group"]
"""Where a verifier's work runs: ``rule`` on the CPU pool, ``code`` in the sandbox, ``model`` and
``judge`` on model backends, ``group`` over all samples of one group after the others."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChatMessage(_Wire):
    role: str
    content: str


class VerifierRef(_Wire):
    """A registered verifier by name, with an optional config (validated by the verifier)."""

    name: str
    config: dict[str, Any] = Field(default_factory=dict)


class WeightedTerm(_Wire):
    verifier: VerifierSpec
    weight: float = 1.0


class WeightedSum(_Wire):
    """``{"sum": [{"verifier": ..., "weight": w}, ...]}``: the weighted sum of the terms' scores."""

    sum: list[WeightedTerm] = Field(min_length=1)
    clip: tuple[float, float] | None = None
    scale: float = 1.0


class Gate(_Wire):
    """``{"gate": format, "then": math}``: ``then``'s score, or ``otherwise`` unless the gate passes.

    The gate passes when its score reaches ``threshold``. A gate that could not judge (timeout,
    error) makes the whole result a non-``ok`` status: no judgement is not the same as failure.
    """

    gate: VerifierSpec
    then: VerifierSpec
    threshold: float = 1.0
    otherwise: float = 0.0


VerifierSpec = str | VerifierRef | WeightedSum | Gate
"""``"math"``, ``{"name": "math", "config": {...}}``, a weighted sum, or a gate."""

WeightedTerm.model_rebuild()
WeightedSum.model_rebuild()
Gate.model_rebuild()


def verifier_label(spec: VerifierSpec | Mapping[str, Any] | None) -> str:
    """A short name for a verifier spec, for metric names and logs.

    A verifier's registered name (``"math"``, ``{"name": "math", ...}``); ``sum`` or ``gate`` for a
    composition; ``default`` for no spec (the service's default verifier decides). One function,
    so that a trainer and every adapter name the same spec the same way.
    """
    if spec is None:
        return "default"
    if isinstance(spec, str):
        return spec
    if isinstance(spec, VerifierRef):
        return spec.name
    if isinstance(spec, WeightedSum):
        return "sum"
    if isinstance(spec, Gate):
        return "gate"
    if isinstance(spec, Mapping):
        if "name" in spec:
            return str(spec["name"])
        for key in ("sum", "gate"):
            if key in spec:
                return key
    return "composite"


class Sample(_Wire):
    """One thing to score. ``reference`` is the verifier's ground truth (a gold answer, tests, a
    rubric); ``group`` ties together the samples drawn for one prompt."""

    id: str | None = None
    prompt: str | list[ChatMessage] | None = None
    response: str
    reference: Any = None
    verifier: VerifierSpec | None = None
    group: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    def prompt_text(self) -> str:
        """The prompt as plain text (chat messages joined), for verifiers that only read text."""
        if self.prompt is None:
            return ""
        if isinstance(self.prompt, str):
            return self.prompt
        return "\n".join(message.content for message in self.prompt)


class Result(_Wire):
    """The judgement of one sample.

    ``status`` other than ``ok`` comes with the verifier's failure score and an ``error`` message:
    a crash or a timeout is never silently turned into a reward of 0.
    """

    id: str | None = None
    score: float
    status: Status = OK
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    steps: list[float] | None = None
    elapsed_ms: float = 0.0

    @classmethod
    def ok(cls, score: float, steps: list[float] | None = None, **details: Any) -> Result:
        return cls(score=float(score), steps=steps, details=details)

    @classmethod
    def failed(cls, message: str, status: Status = ERROR, score: float = 0.0, **details: Any) -> Result:
        return cls(score=score, status=status, error=message, details=details)
