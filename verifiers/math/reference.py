"""Math-Verify's own reading, for a request that asks for it (``reading: "math_verify"``).

rewardhub's ``math`` differs from Math-Verify on purpose in a few places (a false chain of constants
such as ``\\frac{1}{2} = \\frac{10}{9}`` states nothing to us, and Math-Verify reads its right side;
a gold whose ``\\text`` lost its backslash to a Python escape is repaired by us, read as written by
Math-Verify), and Math-Verify's parser has readings of its own that its tests assert (``1 +
\\frac{1}{\\mathrm{e}}`` answers ``1 - \\frac{1}{\\mathrm{e}}``: both are read up to the fraction it
cannot parse). Re-creating each of them in our parser would drift with every release; this reading
is Math-Verify's verdict itself: its ``parse`` on the gold and on the response as written, and its
``verify``, with the settings the config maps onto (:func:`settings`).

What stays ours: the gold's transport (a number, a list, ``{"answer": ...}``), the think block
dropped when ``strip_think`` is on, and the pre-screen (``screen``) of the gold and of the answer
our reader finds, so ``9^{9^{9^{9}}}`` is status ``error`` (``too_complex``) before sympy runs.
Math-Verify's signal-based timeouts are never armed (``parsing_timeout=None``,
``timeout_seconds=None``: ``signal.alarm`` breaks off the main thread); the execution pool's
hard per-sample limit covers anything the screen lets through.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from typing import Any

__all__ = ["Settings", "math_verify_verdict", "reference_version"]


@dataclass(frozen=True)
class Settings:
    """Math-Verify's arguments: the extraction targets (LaTeX always, bare expressions when
    ``expressions``) and ``verify``'s ``float_rounding``, ``strict`` and ``allow_set_relation_comp``."""

    expressions: bool = True
    float_rounding: int = 6
    strict: bool = True
    allow_set_relation_comp: bool = False


@dataclass(frozen=True)
class Verdict:
    """Math-Verify's verdict: whether it matched, and what it read on each side (its strings)."""

    match: bool
    gold: str | None
    answer: str | None


def reference_version() -> str:
    """The installed Math-Verify, named in ``details`` beside the verdict it gave."""
    return f"math-verify {version('math-verify')}"


def math_verify_verdict(gold: str, response: str, settings: Settings) -> Verdict | None:
    """Math-Verify's verdict on ``response`` for ``gold``; None when it reads no gold at all.

    The gold is parsed as written, then, if Math-Verify finds nothing in it, boxed (``\\boxed{3/4}``),
    as verl's and NeMo-Gym's Math-Verify rewards pass a bare gold."""
    gold_parsed = _parse_gold(gold, settings.expressions)
    if not gold_parsed:
        return None
    answer = _parse(response, settings.expressions)
    _quiet()
    from math_verify import verify

    match = verify(
        list(gold_parsed),
        answer,
        float_rounding=settings.float_rounding,
        strict=settings.strict,
        allow_set_relation_comp=settings.allow_set_relation_comp,
        timeout_seconds=None,
    )
    return Verdict(bool(match), _shown(gold_parsed), _shown(answer))


@lru_cache(maxsize=4096)
def _parse_gold(gold: str, expressions: bool) -> tuple[Any, ...]:
    """Cached: a GRPO group sends one gold G times."""
    parsed = _parse(gold, expressions) or _parse(f"\\boxed{{{gold}}}", expressions)
    return tuple(parsed)


def _parse(text: str, expressions: bool) -> list[Any]:
    _quiet()
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    targets: list[Any] = [LatexExtractionConfig()] + ([ExprExtractionConfig()] if expressions else [])
    return list(parse(text, targets, parsing_timeout=None))


def _shown(parsed: Any) -> str | None:
    """Math-Verify's own string of what it extracted (the last element of ``parse``'s list)."""
    if not parsed:
        return None
    last = parsed[-1]
    return last if isinstance(last, str) else str(last)


def _quiet() -> None:
    """Math-Verify warns once that its timeouts are off (we know: see the module docstring) and
    logs every LaTeX string it cannot parse; neither is news to the service's log."""
    for name in ("math_verify", "math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)
