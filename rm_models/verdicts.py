"""Strict reading of a judge's verdict.

A verdict is read from a fixed place, never searched for: "The answer is not true" contains
"true" and means the opposite. Three ways are supported:

- :func:`last_line_verdict`: the last non-empty line must be exactly a verdict word, optionally
  after "Verdict:" / "Answer:" / "Final answer:" and inside markdown emphasis or ``\\boxed{}``;
- :func:`choice_verdict`: the whole output must be one of the allowed choices (constrained
  decoding makes this hold by construction);
- :func:`verdict_probability`: P(true word) / (P(true word) + P(false word)) at the first
  generated token, from its top log-probabilities.

:func:`last_line_choice` and :func:`choice_probabilities` are the first and the last for more than
two words (a pairwise verdict: A, B or tie). Anything else raises
:class:`~rewardhub.models.errors.VerdictError`: an unreadable verdict is an error status, not a score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from .backends.base import TokenAlternatives
from .errors import VerdictError

__all__ = [
    "choice_probabilities",
    "choice_verdict",
    "expected_grade",
    "last_line_choice",
    "last_line_grade",
    "last_line_verdict",
    "verdict_probability",
]

_PREFIX = re.compile(
    r"^(?:final\s+)?(?:verdict|answer|judg(?:e)?ment|decision|score|rating|grade)\s*[:=]\s*", re.IGNORECASE
)
_WRAPPERS = "*_`\"' "


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise VerdictError("the judge returned an empty output")
    return lines[-1]


def _bare(line: str) -> str:
    """The line without markdown emphasis, a leading label, \\boxed{}, or a final period."""
    line = line.strip(_WRAPPERS)
    line = _PREFIX.sub("", line).strip(_WRAPPERS)
    boxed = re.fullmatch(r"\\boxed\{(.*)\}", line)
    if boxed:
        line = boxed.group(1).strip(_WRAPPERS)
    return line.rstrip(".").strip(_WRAPPERS)


def last_line_verdict(text: str, true_word: str = "True", false_word: str = "False") -> bool:
    """True or False from the last line, which must be exactly one of the two words."""
    word = _bare(_last_line(text)).lower()
    if word == true_word.lower():
        return True
    if word == false_word.lower():
        return False
    raise VerdictError(f"judge verdict is not exactly {true_word!r} or {false_word!r}: {_last_line(text)[:200]!r}")


def last_line_choice(text: str, choices: Sequence[str]) -> str:
    """The choice that the last line exactly is (case-insensitive), read as :func:`last_line_verdict` reads."""
    line = _last_line(text)
    word = _bare(line).lower()
    for choice in choices:
        if word == choice.lower():
            return choice
    raise VerdictError(f"judge verdict is not exactly one of {list(choices)}: {line[:200]!r}")


def choice_verdict(text: str, choices: Sequence[str]) -> str:
    """The choice that the whole output is (case-insensitive, surrounding blanks and period ignored)."""
    bare = text.strip().rstrip(".").strip().lower()
    for choice in choices:
        if bare == choice.lower():
            return choice
    raise VerdictError(f"judge output is not one of {list(choices)}: {text[:200]!r}")


def verdict_probability(first_token: TokenAlternatives, true_word: str = "True", false_word: str = "False") -> float:
    """P(true) / (P(true) + P(false)) over the alternatives of the first generated token.

    Variants of a word ("True", " True", "true") are summed: tokenizers split them differently.
    """
    p_true = sum(math.exp(lp) for token, lp in first_token if token.strip().lower() == true_word.lower())
    p_false = sum(math.exp(lp) for token, lp in first_token if token.strip().lower() == false_word.lower())
    if p_true + p_false == 0.0:
        raise VerdictError(f"neither {true_word!r} nor {false_word!r} is among the judge's top first tokens")
    return p_true / (p_true + p_false)


def choice_probabilities(first_token: TokenAlternatives, choices: Sequence[str]) -> dict[str, float]:
    """P(choice) / Σ P(choices) for each choice, over the alternatives of the first generated token
    (variants of a word summed, as in :func:`verdict_probability`)."""
    mass = {choice: 0.0 for choice in choices}
    for token, lp in first_token:
        for choice in choices:
            if token.strip().lower() == choice.lower():
                mass[choice] += math.exp(lp)
    total = sum(mass.values())
    if total == 0.0:
        raise VerdictError(f"none of {list(choices)} is among the judge's top first tokens")
    return {choice: p / total for choice, p in mass.items()}


_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?)(?:\s*/\s*\d+(?:\.\d+)?)?$")


def last_line_grade(text: str, low: float, high: float) -> float:
    """A number in [low, high] from the last line ("Score: 7", "7/10", "**7**"), nothing else."""
    line = _last_line(text)
    match = _NUMBER.fullmatch(_bare(line))
    if not match:
        raise VerdictError(f"judge grade is not a lone number on the last line: {line[:200]!r}")
    grade = float(match.group(1))
    if not low <= grade <= high:
        raise VerdictError(f"judge grade {grade} is outside [{low}, {high}]")
    return grade


def expected_grade(first_token: TokenAlternatives, low: int, high: int) -> float:
    """Σ k·P(k) / Σ P(k) over the integer grades k in [low, high] among the first token's
    alternatives (G-Eval style); needs grades that are single tokens, i.e. 0–9."""
    weights: dict[int, float] = {}
    for token, lp in first_token:
        bare = token.strip()
        if bare.isdigit() and low <= int(bare) <= high:
            weights[int(bare)] = weights.get(int(bare), 0.0) + math.exp(lp)
    total = sum(weights.values())
    if total == 0.0:
        raise VerdictError(f"no grade in [{low}, {high}] among the judge's top first tokens")
    return sum(k * w for k, w in weights.items()) / total
