"""``ifeval``: does the response follow verifiable instructions?

``reference`` lists the constraints, as a JSON array (or ``{"constraints": [...]}``, or either as
JSON text), each an object with a ``type``:
``[{"type": "word_count", "min": 100}, {"type": "keywords", "include": ["rust"]}, {"type": "lowercase"}]``.
The types and their counting rules are in :mod:`verifiers.ifeval_constraints`. Score: the fraction
of constraints satisfied, or 1/0 with ``mode="all"`` (IFEval's strict prompt-level accuracy);
``details["constraints"]`` has each constraint's verdict and what was measured.

An unknown constraint type or a malformed constraint is an ``error`` status naming it: a typo in
the dataset must not read as a model that ignores instructions. The response is checked after
its ``<think>…</think>`` block (``strip_think``), since instructions bind the answer, not the
reasoning. It judges form only: a response can satisfy every constraint and say nothing useful.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationError

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig
from verifiers.ifeval_constraints import CONSTRAINT_TYPES, parse_constraint
from verifiers.text import strip_think

__all__ = ["IFEvalVerifier", "constraints_of"]


def constraints_of(reference: Any) -> list[Any]:
    """The constraint models in ``reference``; anything unusable raises :class:`VerifierError`."""
    if isinstance(reference, str):
        try:
            reference = json.loads(reference)
        except ValueError:
            raise VerifierError("reference is text but not JSON; it must list constraint objects") from None
    if isinstance(reference, dict) and set(reference) == {"constraints"}:
        reference = reference["constraints"]
    if not isinstance(reference, list) or not reference:
        raise VerifierError("reference must be a non-empty list of constraint objects")
    parsed = []
    for index, obj in enumerate(reference):
        try:
            parsed.append(parse_constraint(obj))
        except KeyError as exc:
            known = ", ".join(sorted(CONSTRAINT_TYPES))
            raise VerifierError(f"constraint {index}: unknown type {exc.args[0]!r} (known: {known})") from None
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"][1:]) or "constraint"
            raise VerifierError(f"constraint {index} ({obj['type']}): {where}: {first['msg']}") from None
    return parsed


class IFEvalVerifier(Verifier):
    """The fraction (or all-or-nothing) of the reference's instruction constraints the response satisfies."""

    name = "ifeval"
    kind = "rule"

    class Config(VerifierConfig):
        mode: Literal["fraction", "all"] = Field(
            "fraction", description="fraction: share of constraints satisfied; all: 1 only when every one is."
        )
        strip_think: bool = Field(True, description="Check only the text after a <think>...</think> block.")

    def score(self, sample: Sample, config: Config) -> Result:
        constraints = constraints_of(sample.reference)
        text = strip_think(sample.response) if config.strip_think else sample.response
        verdicts = [(c, c.check(text)) for c in constraints]
        passed = sum(v.passed for _, v in verdicts)
        score = passed / len(verdicts) if config.mode == "fraction" else float(passed == len(verdicts))
        return Result.ok(
            score,
            satisfied=passed,
            total=len(verdicts),
            constraints=[{"type": c.type, "passed": v.passed, "observed": v.observed} for c, v in verdicts],
        )
