"""Final-answer extraction and a small normaliser shared by the group verifiers.

Majority voting and pass@k need to know when two responses give *the same answer*. This is the
cheap version: the answer is the last ``\\boxed{…}``, else the last ``<answer>…</answer>``, else
what follows the last "answer is" / "Answer:" / GSM8K's ``####``; two answers are the same when
their normal forms are equal. The normal form drops LaTeX dressing (``$``, ``\\left``, ``\\text{}``,
spacing commands, ``\\dfrac``), a leading ``x =``, a trailing period, thousands separators, spaces
and the parentheses of a choice such as ``(A)``, lower-cases, and writes every rational number
(``0.5``, ``1/2``, ``\\frac{1}{2}``) as one reduced fraction.

It does not know algebra: ``2\\sqrt{2}`` and ``\\sqrt{8}`` are different answers here. The
``math`` verifier's symbolic equivalence is the better judge and should replace
:func:`normalize_final_answer` here once it exposes its extraction and comparison as functions.
"""

from __future__ import annotations

import re
from fractions import Fraction

from verifiers.text import strip_think

__all__ = ["extract_final_answer", "normalize_final_answer"]

# the body may not contain another opener: many unclosed tags would otherwise rescan the text
_ANSWER_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_IS = re.compile(r"(?:answer is|answer:|####)\s*:?\s*([^\n]+)", re.IGNORECASE)
_TEXT_COMMANDS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|operatorname)\{([^{}]*)\}")
_DROP = re.compile(r"\\left|\\right|\\[,;:! ]|\\quad|\\qquad|\$|\\displaystyle")
_ASSIGNMENT = re.compile(r"^[a-z]\w*\s*=\s*(?=\S)", re.IGNORECASE)
_FRAC = re.compile(r"\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CHOICE = re.compile(r"^\(([a-z])\)$")  # "(A)" is the choice "a"


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
