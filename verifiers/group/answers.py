"""Final answers and when two of them are the same, for the group verifiers.

Majority voting and pass@k need to know when two responses give *the same answer*. The answer
is read by the one reader every verifier shares
(:func:`rewardhub.verifiers.final_answer.read_final_answer`: the last of a box, ``####``, an
``<answer>…</answer>`` tag and "the answer is", else a bare answer or the last stated one), so
majority voting, pass@k, ``math`` and the judge read the same final answer. When two are the
same is chosen by the verifiers' ``equivalence`` setting:

- ``math`` (the default): the ``math`` verifier's normalisation, pre-screen and value parsing; two answers are the same when their parsed values
  are equal or :func:`rewardhub.verifiers.math.equivalent` says so (``0.5`` and ``\\frac{1}{2}``, ``x = 3``
  and ``3``, ``(0, 1]`` and ``(0,1]``). An answer too expensive to parse raises
  :class:`~rewardhub.verifiers.math.TooComplex`: the caller reports that sample, it never guesses.
- ``text``: no sympy, for speed or for answers that are not math (the reader may then answer in
  words: "The answer is Paris."); two answers are the same when their normal forms are equal. The normal
  form drops LaTeX dressing (``$``, ``\\left``, ``\\text{}``, spacing commands, ``\\dfrac``), a
  leading ``x =``, a trailing period, thousands separators, spaces and the parentheses of a choice
  such as ``(A)``, lower-cases, and writes every rational number (``0.5``, ``1/2``,
  ``\\frac{1}{2}``) as one reduced fraction. It does not know algebra: ``2\\sqrt{2}`` and
  ``\\sqrt{8}`` differ.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from ..final_answer import extract_gold, read_final_answer
from ..math import Policy, Unparseable, equivalent, screen
from ..math.normalize import normalize
from ..math.parse import parse_normalized

__all__ = [
    "Answer",
    "Equivalence",
    "extract_final_answer",
    "normalize_final_answer",
    "read_answer",
    "read_gold",
    "same_answer",
]

Equivalence = Literal["math", "text"]
_POLICY = Policy()

_TEXT_COMMANDS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|operatorname)\{([^{}]*)\}")
_DROP = re.compile(r"\\left|\\right|\\[,;:! ]|\\quad|\\qquad|\$|\\displaystyle")
_ASSIGNMENT = re.compile(r"^[a-z]\w*\s*=\s*(?=\S)", re.IGNORECASE)
_FRAC = re.compile(r"\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CHOICE = re.compile(r"^\(([a-z])\)$")  # "(A)" is the choice "a"


@dataclass(frozen=True)
class Answer:
    text: str  # as written
    normalized: str  # one spelling, for details
    key: Hashable  # equal keys are the same answer: a parsed math value, or the normal form


def read_answer(response: str, equivalence: Equivalence) -> Answer | None:
    """The response's final answer, or None when it commits to none.

    Raises :class:`~rewardhub.verifiers.math.TooComplex` (math) when the answer is too expensive to read."""
    if equivalence == "text":
        raw = extract_final_answer(response)
        return None if raw is None else _text_answer(raw)
    fallback = None
    for candidate in read_final_answer(response):  # best first, as `math` reads them
        answer = _math_answer(candidate.text)
        if not isinstance(answer.key, str):
            return answer
        fallback = fallback or answer
    return fallback


def read_gold(reference: str, equivalence: Equivalence) -> Answer:
    """The gold answer; raises ``Unparseable`` (math) when it cannot be read, ``TooComplex`` when too costly."""
    if equivalence == "text":
        return _text_answer(reference)
    gold = _math_answer(extract_gold(reference).text)
    if isinstance(gold.key, str):
        raise Unparseable(f"gold answer {reference[:80]!r} is not readable math")
    return gold


def same_answer(first: Answer, other: Answer) -> bool:
    """Whether ``other`` gives the answer ``first`` gives (``first`` plays the gold)."""
    if first.key == other.key:
        return True
    if isinstance(first.key, str) or isinstance(other.key, str):
        return False  # unparsed math agrees only with the same spelling
    return equivalent(first.key, other.key, _POLICY) is not None  # type: ignore[arg-type]


def _math_answer(text: str) -> Answer:
    normalized = normalize(text)
    screen(normalized)
    try:
        return Answer(text, normalized, parse_normalized(normalized))
    except Unparseable:
        return Answer(text, normalized, normalized)


def _text_answer(raw: str) -> Answer:
    normalized = normalize_final_answer(raw)
    return Answer(raw, normalized, normalized)


def extract_final_answer(response: str) -> str | None:
    """The final answer a response commits to as text (the shared reader, answers in words
    allowed), or None when it commits to none."""
    candidates = read_final_answer(response, words=True)
    return candidates[0].text if candidates else None


def normalize_final_answer(answer: str) -> str:
    """A canonical string: equal normal forms mean the same answer (see the module docstring)."""
    text = _TEXT_COMMANDS.sub(r"\1", answer)
    text = _DROP.sub("", text).strip().rstrip(".").strip()
    text = _ASSIGNMENT.sub("", text)
    text = _FRAC.sub(r"\1/\2", text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac"))
    text = _THOUSANDS.sub("", text)
    text = "".join(text.split()).lower()
    text = _CHOICE.sub(r"\1", text)
    return _as_fraction(text) or text


def _as_fraction(text: str) -> str | None:
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]  # "(2/4)" is a number; "(1,2)" will not parse and stays an interval
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None
    return str(value)
