"""The values an answer can be, as frozen dataclasses: what ``parse`` builds and ``compare`` reads.

An answer is a small tree. Leaves are numbers (exact, with the precision they were written with),
sympy expressions, words, multiple-choice letters and clock times; inner nodes are sequences and
sets, labelled components (``w = 16``) and the alternatives of an ambiguous spelling (``1,5`` is a
decimal comma in much of the world and a list of two numbers elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

__all__ = [
    "Choice",
    "Either",
    "Items",
    "ItemsKind",
    "Labeled",
    "Num",
    "Relation",
    "Sym",
    "Text",
    "Time",
    "Unparseable",
    "Value",
]


class Unparseable(ValueError):
    """The text is not an answer this verifier can read."""


@dataclass(frozen=True)
class Num:
    """A number written plainly: integer, decimal, fraction, mixed number, scientific notation.

    ``decimals`` is how many digits followed the decimal point (None for exact spellings such as
    ``3/4``): a gold of ``85.71`` states its own precision.
    """

    value: Fraction
    decimals: int | None = None
    percent: bool = False
    degrees: bool = False
    base: int | None = None  # "204_5": the digits are compared, not the value


@dataclass(frozen=True)
class Sym:
    """Any other mathematical expression, as a sympy object (never built by ``eval``)."""

    expr: Any
    percent: bool = False
    degrees: bool = False


@dataclass(frozen=True)
class Relation:
    """An equation or inequality (or a chain of them) that is not a labelled value."""

    expr: Any
    variable: Any = None  # set-builder ``\\{x \\mid ...\\}``: the bound variable


@dataclass(frozen=True)
class Text:
    """An answer in words (``\\text{odd}``, "Evelyn"), compared after case and space folding."""

    words: str


@dataclass(frozen=True)
class Choice:
    """A multiple-choice letter, with the option's content when written ("C. x = 42")."""

    letter: str
    option: Value | None = None


@dataclass(frozen=True)
class Time:
    """A clock time ``h:mm`` with an optional am/pm."""

    hour: int
    minute: int
    meridiem: str | None = None


ItemsKind = Literal["list", "set", "tuple", "interval", "vector", "parts"]


@dataclass(frozen=True)
class Items:
    """Several values: a bare list (order free), a set, a tuple or an interval (order matters),
    or the parts of a multi-part answer (one per box that prose separates: part (a), part (b), in order).

    ``brackets`` keeps the delimiters of tuples and intervals: ``(]`` is not ``()``.
    """

    items: tuple[Value, ...]
    kind: ItemsKind
    brackets: str = ""


@dataclass(frozen=True)
class Labeled:
    """``label = value`` where the label only names the value (``x = 5``, ``w=16``, "Minimum: 1")."""

    label: str
    value: Value


@dataclass(frozen=True)
class Either:
    """An ambiguous spelling: the answer matches if any reading does."""

    options: tuple[Value, ...]


Value = Num | Sym | Relation | Text | Choice | Time | Items | Labeled | Either
