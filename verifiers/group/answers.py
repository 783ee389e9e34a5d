"""Final answers and when two of them are the same, for the group verifiers.

Majority voting and pass@k need to know when two responses give *the same answer*. Two ways,
chosen by the verifiers' ``equivalence`` setting:

- ``math`` (the default): the ``math`` verifier's own extraction (last box, ``####``, "the answer
  is", else a bare answer; inside the last ``<answer>…</answer>`` when there is one),
  normalisation, pre-screen and value parsing; two answers are the same when their parsed values
  are equal or :func:`rewardhub.verifiers.math.equivalent` says so (``0.5`` and ``\\frac{1}{2}``, ``x = 3``
  and ``3``, ``(0, 1]`` and ``(0,1]``). An answer too expensive to parse raises
  :class:`~rewardhub.verifiers.math.TooComplex`: the caller reports that sample, it never guesses.
- ``text``: no sympy, for speed or for answers that are not math. The answer is the last
  ``\\boxed{…}``, else the last ``<answer>…</answer>``, else what follows the last "answer is" /
  "Answer:" / ``####``; two answers are the same when their normal forms are equal. The normal
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

from ..math import Policy, Unparseable, equivalent, extract_answer, extract_gold, screen
from ..math.normalize import normalize
from ..math.parse import parse_normalized
from ..text import strip_think

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

# the body may not contain another opener: many unclosed tags would otherwise rescan the text
_ANSWER_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_IS = re.compile(r"(?:answer is|answer:|####)\s*:?\s*([^\n]+)", re.IGNORECASE)
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
    tags = _ANSWER_TAG.findall(strip_think(response))
    fallback = None
    for candidate in extract_answer(tags[-1] if tags else response):  # best first, as `math` reads them
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
    """The final answer a response commits to, or None when it commits to none."""
    text = strip_think(response)
    boxed = _last_braced(text, "\\boxed")
    if boxed is not None:
        return boxed.strip()
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return tags[-1].strip()
    said = _ANSWER_IS.findall(text)
    return said[-1].strip() if said else None


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


def _last_braced(text: str, command: str) -> str | None:
    start = text.rfind(command + "{")
    if start < 0:
        return None
    depth, open_at = 0, start + len(command)
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1 : i]
    return None
