"""``ifeval``: does the response follow verifiable instructions?

``reference`` lists the constraints, as a JSON array (or ``{"constraints": [...]}``, or either as
JSON text), each an object with a ``type``:
``[{"type": "word_count", "min": 100}, {"type": "keywords", "include": ["rust"]}, {"type": "lowercase"}]``.
The types and their counting rules are in :mod:`rewardhub.verifiers.ifeval_constraints`. Rows of the IFEval
dataset itself, ``{"instruction_id_list": [...], "kwargs": [...]}``, are accepted too and
translated (:func:`from_ifeval`); the few IFEval instructions without a counterpart here
(response language, letter frequency, nth-paragraph first word, two responses, constrained
response) are an ``error`` status, never silently skipped. Score: the fraction
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

from .ifeval_constraints import CONSTRAINT_TYPES, parse_constraint
from .text import strip_think

__all__ = ["IFEvalVerifier", "constraints_of", "from_ifeval"]

# IFEval instruction id -> (our type, {IFEval kwarg: our field}); a "relation" kwarg turns the
# count into min ("at least") or max ("less than", so count - 1).
_IFEVAL: dict[str, tuple[str, dict[str, str]]] = {
    "keywords:existence": ("keywords", {"keywords": "include"}),
    "keywords:forbidden_words": ("keywords", {"forbidden_words": "exclude"}),
    "keywords:frequency": ("keyword_frequency", {"keyword": "keyword", "frequency": "count"}),
    "length_constraints:number_sentences": ("sentence_count", {"num_sentences": "count"}),
    "length_constraints:number_words": ("word_count", {"num_words": "count"}),
    "length_constraints:number_paragraphs": ("paragraph_count", {"num_paragraphs": "exact"}),
    "detectable_content:number_placeholders": ("placeholder_count", {"num_placeholders": "min"}),
    "detectable_content:postscript": ("postscript", {"postscript_marker": "marker"}),
    "detectable_format:number_bullet_lists": ("bullet_count", {"num_bullets": "exact"}),
    "detectable_format:number_highlighted_sections": ("highlight_count", {"num_highlights": "min"}),
    "detectable_format:multiple_sections": ("section_count", {"section_spliter": "marker", "num_sections": "min"}),
    "detectable_format:json_format": ("json_format", {}),
    "detectable_format:title": ("title", {}),
    "combination:repeat_prompt": ("starts_with", {"prompt_to_repeat": "text"}),
    "startend:end_checker": ("ends_with", {"end_phrase": "text"}),
    "startend:quotation": ("quotation", {}),
    "change_case:capital_word_frequency": ("capital_word_count", {"capital_frequency": "count"}),
    "change_case:english_capital": ("uppercase", {}),
    "change_case:english_lowercase": ("lowercase", {}),
    "punctuation:no_comma": ("no_commas", {}),
}
_RELATIONS = {"at least": "min", "less than": "max"}


def from_ifeval(instruction_ids: list[str], kwargs: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Constraint objects for one row of the IFEval dataset (its ``null`` kwargs are ignored)."""
    if not isinstance(instruction_ids, list) or not isinstance(kwargs, list) or len(instruction_ids) != len(kwargs):
        raise VerifierError("instruction_id_list and kwargs must be lists of the same length")
    if not all(isinstance(k, dict) or k is None for k in kwargs):
        raise VerifierError("every IFEval kwargs entry must be an object")
    constraints = []
    for instruction, given in zip(instruction_ids, kwargs, strict=True):
        if instruction not in _IFEVAL:
            raise VerifierError(f"IFEval instruction {instruction!r} has no counterpart in ifeval")
        kind, fields = _IFEVAL[instruction]
        given = {k: v for k, v in (given or {}).items() if v is not None}
        constraint: dict[str, Any] = {"type": kind}
        for theirs, ours in fields.items():
            if theirs in given:
                constraint[ours] = given[theirs]
        if "count" in constraint:
            relation = given.get("relation") or given.get("capital_relation") or "at least"
            count = constraint.pop("count")
            bound = _RELATIONS.get(relation)
            if bound is None:
                raise VerifierError(f"IFEval instruction {instruction!r}: unknown relation {relation!r}")
            constraint[bound] = count if bound == "min" else count - 1
        if kind == "paragraph_count":
            constraint["separator"] = "***"  # IFEval's paragraphs are separated by the markdown divider
        constraints.append(constraint)
    return constraints


def constraints_of(reference: Any) -> list[Any]:
    """The constraint models in ``reference``; anything unusable raises :class:`VerifierError`."""
    if isinstance(reference, str):
        try:
            reference = json.loads(reference)
        except ValueError:
            raise VerifierError("reference is text but not JSON; it must list constraint objects") from None
    if isinstance(reference, dict) and set(reference) == {"constraints"}:
        reference = reference["constraints"]
    elif isinstance(reference, dict) and {"instruction_id_list", "kwargs"} <= set(reference):
        reference = from_ifeval(reference["instruction_id_list"], reference["kwargs"])
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
