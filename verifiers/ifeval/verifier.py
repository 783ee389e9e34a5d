"""``ifeval``: does the response follow verifiable instructions?

The reference is one of two things:

- **an instruction row**, ``{"instruction_id_list": [...], "kwargs": [...]}`` (a row of IFEval,
  IFEvalG/RLVR-IFeval, IFBench or NeMo-Gym's ``instruction_following`` data; other keys such as
  ``key`` and ``prompt`` are ignored). Each id is checked by the rule of the checker that defined it
  (:mod:`.google` for IFEval's 25, :mod:`.ifevalg`, :mod:`.ifbench`), with that checker's verdict;
  ``loose=True`` gives IFEval's loose verdict. An id with no rule here is an ``error`` naming it.
- **today's own constraint list**, ``[{"type": "word_count", "min": 100}, ...]`` (or
  ``{"constraints": [...]}``, or either as JSON text): rewardhub's own constraint types, with the
  counting rules written in :mod:`.constraints`. They keep their meaning; where they differ from the
  IFEval instruction of the same intent the table in :mod:`.constraints` says how.

Score: the fraction of instructions followed, or 1/0 with ``mode="all"`` (IFEval's prompt-level
accuracy); ``details["constraints"]`` has each one's verdict and what was measured.

IFEval's framing is kept for instruction rows: an empty (whitespace-only) response follows no
instruction (``judge_empty_response=True`` checks it like any other, as NeMo-Gym's server does).
The response is checked after its ``<think>…</think>`` block (``strip_think``), since instructions
bind the answer, not the reasoning. It judges form only: a response can satisfy every instruction
and say nothing useful.

It has no ``warm_up``: NLTK and langdetect's profiles cost about 2 s of CPU and 170 MB to load, so
a worker loads them on its first sample that needs them, not every fork server on every start.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, ValidationError

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..text import strip_think
from . import google, ifbench, ifbench_format, ifbench_sentences, ifbench_tasks, ifevalg  # noqa: F401 (each registers its rules in RULES)
from .constraints import CONSTRAINT_TYPES, Verdict, parse_constraint
from .rules import bind

__all__ = ["IFEvalVerifier", "constraints_of", "instructions_of", "loose_variants"]

Check = tuple[str, Callable[[str], Verdict]]  # (what the details call it, its check)


def loose_variants(response: str) -> list[str]:
    """IFEval's loose reading: the response, without its first line, its last line or both, and
    each of those four with every ``*`` removed (markdown emphasis), in Google's order."""
    lines = response.split("\n")
    cut = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [response, response.replace("*", ""), *cut, *(text.replace("*", "") for text in cut)]


def instructions_of(row: dict[str, Any]) -> list[Check]:
    """The checks of one instruction row; anything unusable raises :class:`VerifierError`."""
    ids, kwargs = row["instruction_id_list"], row["kwargs"]
    if not isinstance(ids, list) or not isinstance(kwargs, list) or len(ids) != len(kwargs):
        raise VerifierError("instruction_id_list and kwargs must be lists of the same length")
    if not ids:
        raise VerifierError("instruction_id_list is empty")
    if not all(isinstance(k, dict) or k is None for k in kwargs):
        raise VerifierError("every kwargs entry must be an object (or null)")
    return [(str(i), bind(i, k)) for i, k in zip(ids, kwargs, strict=True)]


def constraints_of(reference: Any) -> list[Any]:
    """Today's own constraint models in ``reference``; anything unusable raises :class:`VerifierError`."""
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


def _checks(reference: Any) -> tuple[list[Check], bool]:
    """The reference's checks, and whether it is an instruction row (IFEval's framing applies)."""
    if isinstance(reference, str):
        try:
            reference = json.loads(reference)
        except ValueError:
            raise VerifierError(
                "reference is text but not JSON; it must be an instruction row or constraint objects"
            ) from None
    if isinstance(reference, dict) and {"instruction_id_list", "kwargs"} <= set(reference):
        return instructions_of(reference), True
    return [(c.type, c.check) for c in constraints_of(reference)], False


def _follow(check: Callable[[str], Verdict], variants: list[str], empty_fails: bool) -> tuple[Verdict, int]:
    """The first variant's verdict, or the first passing one's, with its index in ``variants``."""
    first: Verdict | None = None
    for index, text in enumerate(variants):
        if empty_fails and not text.strip():
            verdict = Verdict(False, "empty response")
        else:
            verdict = check(text)
        if verdict.passed:
            return verdict, index
        first = first or verdict
    assert first is not None
    return first, 0


_VARIANT_NAMES = (
    "response", "without *", "without first line", "without last line", "without first and last lines",
    "without first line and *", "without last line and *", "without first and last lines and *",
)  # fmt: skip


class IFEvalVerifier(Verifier):
    """The fraction (or all-or-nothing) of the reference's instructions the response follows."""

    name = "ifeval"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        mode: Literal["fraction", "all"] = Field(
            "fraction", description="fraction: share of instructions followed; all: 1 only when every one is."
        )
        loose: bool = Field(
            False,
            description="IFEval's loose verdict: an instruction also counts as followed when it holds for the "
            "response without its first and/or last line, or without '*' (Google's 8 variants).",
        )
        judge_empty_response: bool = Field(
            False,
            description="Instruction rows: false keeps IFEval's rule that an empty response follows nothing; "
            "true checks it like any other text (NeMo-Gym's instruction_following does).",
        )
        strip_think: bool = Field(True, description="Check only the text after a <think>...</think> block.")

    def score(self, sample: Sample, config: Config) -> Result:
        checks, is_row = _checks(sample.reference)
        text = strip_think(sample.response) if config.strip_think else sample.response
        variants = loose_variants(text) if config.loose else [text]
        empty_fails = is_row and not config.judge_empty_response
        verdicts = []
        for name, check in checks:
            verdict, variant = _follow(check, variants, empty_fails)
            entry: dict[str, Any] = {"type": name, "passed": verdict.passed, "observed": verdict.observed}
            if variant:
                entry["variant"] = _VARIANT_NAMES[variant]
            verdicts.append(entry)
        passed = sum(v["passed"] for v in verdicts)
        score = passed / len(verdicts) if config.mode == "fraction" else float(passed == len(verdicts))
        return Result.ok(score, satisfied=passed, total=len(verdicts), constraints=verdicts)
