"""Reading one normalized answer into a value tree (see ``values``), cached per process.

The structure of an answer (lists, tuples, intervals, sets, labels such as ``x =`` or
"Minimum:", units, percent signs, degree marks, clock times, multiple-choice letters, words) is
read here, by hand; plain numbers take the fast path of ``numbers`` (no sympy), and the other
mathematical leaves go to math-verify's LaTeX parser (latex2sympy2, an ANTLR grammar: no
``eval`` anywhere).

:func:`parse_answer` keeps an LRU cache of 16k answers per worker process: GRPO scores G
responses against one gold, and many of those responses share their final answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy
from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy, normalize_latex
from math_verify.grader import should_treat_as_complex

from .normalize import normalize
from .numbers import THOUSANDS, read_number
from .values import (
    Choice,
    Either,
    Items,
    Labeled,
    Num,
    Relation,
    Sym,
    Text,
    Time,
    Unparseable,
    Value,
)

__all__ = ["Unparseable", "parse_answer", "parse_normalized", "split_top_level"]

CACHE_SIZE = 16384

_LATEX = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="none", equations=False
)


# -- entry points ----------------------------------------------------------------------------------


def parse_answer(text: str) -> Value:
    """Normalize and parse ``text``; raises :class:`Unparseable`."""
    return parse_normalized(normalize(text))


def parse_normalized(text: str) -> Value:
    """Parse already-normalized text (cached); raises :class:`Unparseable`."""
    value = _parse_cached(text)
    if isinstance(value, _Failure):
        raise Unparseable(value.message)
    return value


@dataclass(frozen=True)
class _Failure:
    """A cached parse failure (a message, not the exception: no traceback kept alive)."""

    message: str


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(text: str) -> Value | _Failure:
    try:
        return _parse(text)
    except Unparseable as exc:
        return _Failure(str(exc))
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # the LaTeX parser and sympy raise anything on malformed input
        return _Failure(f"cannot parse {text[:80]!r}: {type(exc).__name__}")


# -- structure -------------------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_WORD_SEPARATOR = re.compile(r"(?<![A-Za-z\\])(?:and|or)(?![A-Za-z])|(?<=[\d)}])(?:and|or)(?=[A-Z(\\])")  # "1orW(x)"
_CHOICE = re.compile(r"^([A-E])(?:[.:)]\s+(.+)|[.:)]?)$")
_CHOICE_PARENTHESIZED = re.compile(r"^\(([A-Ea-e])\)(?:[.:]?\s+(.+)|[.:]?)$")
_TEXT_AND = re.compile(r"\\text\{\s*,?\s*(?:and|or)\s*\}")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?\s*(?:\\text\{\s*)?([ap])?\.?\s*(?:m\.?)?\s*\}?$", re.IGNORECASE)
_TEXT_WRAPPED = re.compile(r"^\\text\{([^{}]*)\}$")
# "\text{(B)}\ 1", "\textbf{(B) }1": a contest's choice label set in text, then the option's content
_TEXT_CHOICE = re.compile(r"^\\text\{\s*\(([A-Ea-e])\)\s*\}\s*")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z'\- ]*$")
_MATH_WORDS = frozenset("pi e i sqrt sin cos tan log ln exp infty oo inf".split())


def split_top_level(text: str, separators: tuple[str, ...]) -> list[str]:
    """Split at separators outside any bracket (``(0,1)`` and ``\\{1,2\\}`` stay whole)."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            for separator in separators:
                if text.startswith(separator, i) and _separator_stands_alone(text, i, separator):
                    parts.append(text[start:i])
                    start = i + len(separator)
                    i = start - 1
                    break
        i += 1
    parts.append(text[start:])
    return parts


def _separator_stands_alone(text: str, i: int, separator: str) -> bool:
    if not separator[-1].isalpha():
        return True
    return i + len(separator) >= len(text) or not text[i + len(separator)].isalpha()


def _parse(text: str, commas: bool = True) -> Value:
    text = text.strip()
    if not text:
        raise Unparseable("empty answer")
    wrapped = _TEXT_WRAPPED.match(text)
    if wrapped and not _is_words(wrapped.group(1).strip()):
        text = wrapped.group(1).strip()  # \text{(C)}, \text{E}, \text{10:30 a.m.}
    text = _TEXT_CHOICE.sub(lambda label: f"({label.group(1)}) ", text).strip()
    text = _TEXT_AND.sub(",", text)
    for reader in (_choice, _time, _ambiguous_number) if commas else (_choice, _time):
        value = reader(text)
        if value is not None:
            return value
    if THOUSANDS.match(text):
        return read_number(text)  # "7,425,000" is one number, not a list
    if not _WORDS.match(text) and _WORD_SEPARATOR.search(text):
        text = _WORD_SEPARATOR.sub(",", text)
    groups = [g for g in split_top_level(text, (";",)) if g.strip()]
    if len(groups) > 1:
        return _list([_group(g) for g in groups])
    return _group(text)


def _group(text: str) -> Value:
    parts = [p for p in split_top_level(text, (",",)) if p.strip()]
    if len(parts) > 1:
        return _list([_element(p) for p in parts])
    if not parts:
        raise Unparseable("empty list element")
    return _element(parts[0])


def _flatten(values: list[Value] | tuple[Value, ...]) -> list[Value]:
    """``1 \\pm \\sqrt{5}, -2``: the two values of a ± join the list they stand in."""
    flat: list[Value] = []
    for value in values:
        if isinstance(value, Items) and value.kind == "set" and value.brackets == "\\pm":
            flat.extend(value.items)
        else:
            flat.append(value)
    return flat


def _list(values: list[Value]) -> Value:
    """A bare list; labels repeating in a cycle (``p=5, q=2, p=7, q=2``) make tuples."""
    flat = _flatten(values)
    labels = [v.label for v in flat if isinstance(v, Labeled)]
    if len(labels) == len(flat) and len(set(labels)) > 1:
        width = len(set(labels))
        if len(flat) % width == 0 and len(flat) > width and labels == labels[:width] * (len(flat) // width):
            rows = [Items(tuple(flat[i : i + width]), "tuple", "()") for i in range(0, len(flat), width)]
            return Items(tuple(rows), "list")
    return Items(tuple(flat), "list")


def _is_words(text: str) -> bool:
    return bool(_WORDS.match(text)) and len(text) > 1


def _choice(text: str) -> Value | None:
    match = _CHOICE.match(text) or _CHOICE_PARENTHESIZED.match(text)
    if match is None:
        return None
    option_text = match.group(2)
    option = None
    if option_text:
        try:
            option = _parse(option_text)
        except Unparseable:
            option = Text(_fold_words(option_text))
    return Choice(match.group(1).upper(), option)


def _time(text: str) -> Value | None:
    match = _TIME.match(text)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 24 or minute > 59:
        return None
    meridiem = match.group(3).lower() if match.group(3) else None
    return Time(hour, minute, meridiem)


_AMBIGUOUS_COMMA = re.compile(
    r"^(?P<label>[A-Za-z](?:_\{?\w+\}?)?\s*=\s*|[A-Za-z][A-Za-z ]*[A-Za-z]\s*:\s*)?(?P<left>[-+]?\d+),(?P<right>\d+)"
    r"(?P<unit>\s*(?:\\%|\^\\circ|\\text\{[^{}]*\}|[€£¥₹]|\\euro|[A-Za-z]{2,12}\.?|\s[mgslhLNJWVK]\.?))?$"
)


def _ambiguous_number(text: str) -> Value | None:
    """``1,22`` and ``1,234``: a decimal comma or a thousands separator, or a list of two numbers;
    also after a label (``x = 2,74``, ``Total: 2,74``) and before a unit, currency or percent sign
    (``2,74 €``).

    The readings that can be meant are all kept (the answer matches if any does). One digit after
    the comma (``1,3``, ``-2,1``) is a list, as short lists of roots are written (a decimal-comma
    reading would let ``0.1`` match the roots ``0,1``), unless the list cannot be meant: a unit or
    percent sign follows (``1,5 m``, ``12,5 \\%``: roots carry none) or the first item would be
    ``-0`` (``-0,5``).
    """
    match = _AMBIGUOUS_COMMA.match(text)
    if match is None:
        return None
    label, left, right, unit = (
        match.group("label") or "",
        match.group("left"),
        match.group("right"),
        match.group("unit"),
    )
    decimal = _parse_plain(f"{label}{left}.{right}{unit or ''}")
    if left in ("-0", "+0"):
        return decimal  # "-0, 5" is no list anyone writes
    as_list = _parse_plain(text)
    readings = [decimal]
    if len(right) == 3 and len(left.lstrip("+-")) <= 3 and not left.lstrip("+-").startswith("0"):
        readings.insert(0, _parse_plain(f"{label}{left}{right}{unit or ''}"))
    if len(right) == 1 and not unit:
        return as_list
    return Either((*readings, as_list))


def _parse_plain(text: str) -> Value:
    """``_parse`` without the decimal-comma reading: the list a comma makes, or one number."""
    return _parse(text, commas=False)


# -- elements: labels, relations, brackets ---------------------------------------------------------

_RELATION = re.compile(r"<|>|\\le(?![a-z])|\\ge(?![a-z])|\\neq(?![a-z])")
_SET_BUILDER = re.compile(r"^\\?\{\s*([A-Za-z])\s*(?:\\in\s*\\mathbb\{?R\}?\s*)?(?:\||\\mid|:)\s*(.+?)\s*\\?\}$")
_TEXT_LABEL = re.compile(
    r"^(\\text\{[^{}]*?\}|[A-Za-z][A-Za-z ]*[A-Za-z])\s*:\s*(.+)$|^\\text\{([^{}]*?)\s*:\s*\}\s*(.+)$"
)
_LABEL_NOISE = re.compile(
    r"_\{[^{}]*\}|_\w|(?<=[A-Za-z])\([^()]*\)|\\text\{|\\overline|\\angle|\\frac|\\left|\\right|[{}'\s\\]"
)


def _element(text: str) -> Value:
    text = text.strip()
    time = _time(text)
    if time is not None:
        return time
    if "\\approx" in text:
        left, right = text.split("\\approx", 1)
        if _is_label(left):
            return Labeled(_label_key(left), _element(right))
        return _element(left)
    parts = split_top_level(text, ("\\in",))
    if len(parts) == 2 and _is_label(parts[0]):
        return Labeled(_label_key(parts[0]), _element(parts[1]))
    parts = split_top_level(text, ("=",))
    if len(parts) > 1:
        return _equation([p.strip() for p in parts])
    labelled = _TEXT_LABEL.match(text)
    if labelled and not _WORDS.match(text):
        label, value = (labelled.group(1), labelled.group(2)) if labelled.group(1) else labelled.group(3, 4)
        return Labeled(_label_key(label), _element(value))
    builder = _SET_BUILDER.match(text)
    if builder:
        condition = _sympy(builder.group(2))
        named = [s for s in getattr(condition, "free_symbols", ()) if str(s) == builder.group(1).lower()]
        return Relation(condition, named[0] if named else None)
    if _RELATION.search(_strip_brackets(text)):
        return Relation(_sympy(text))
    if len(split_top_level(text, ("\\cup",))) > 1:
        return Sym(_sympy(text))
    matrix = _matrix(text)
    if matrix is not None:
        return matrix
    bracketed = _bracketed(text)
    if bracketed is not None:
        return bracketed
    return _leaf(text)


def _equation(parts: list[str]) -> Value:
    if _is_label(parts[0]):
        return Labeled(_label_key(parts[0]), _element(parts[-1]))
    if len(parts) == 2 and _is_label(parts[1]):
        return Labeled(_label_key(parts[1]), _element(parts[0]))
    if len(parts) > 2 and _is_label(parts[-2]):
        return Labeled(_label_key(parts[-2]), _element(parts[-1]))
    if all(_is_constant(p) for p in parts):
        if _false_chain(parts):  # "49 = 42" states nothing: the equation is false (falsepass's P15)
            return Relation(sympy.Eq(_sympy(parts[-2]), _sympy(parts[-1]), evaluate=False))
        return _element(parts[-1])  # "35 + 70 = 105" states 105
    return Relation(sympy.Eq(_sympy(parts[-2]), _sympy(parts[-1]), evaluate=False))


def _false_chain(parts: list[str]) -> bool:
    """Whether a chain of constants ``a = b = c`` has two sides of different value (beyond rounding:
    ``2\\pi = 6.28`` holds); False when a side cannot be read (the last side is then read as before)."""
    try:
        values = [complex(sympy.N(_sympy(part))) for part in parts]
    except (Unparseable, TypeError, ValueError, sympy.SympifyError):
        return False
    return any(abs(a - b) > 5e-3 * max(1.0, abs(a), abs(b)) for a, b in zip(values, values[1:], strict=False))


def _is_label(text: str) -> bool:
    """A name, not a formula: ``x``, ``f(x)``, ``a_{37}``, ``(p,q)``, ``|AB|``, ``V_1:V_2``."""
    text = text.strip()
    if not text or re.search(r"[+\-*^=<>]|\\(?:cdot|times|sqrt|pm|le|ge)", text):
        return False
    rest = _LABEL_NOISE.sub("", text)
    return bool(rest) and bool(re.fullmatch(r"[A-Za-z|():/,\[\]]+", rest)) and any(c.isalpha() for c in rest)


def _label_key(text: str) -> str:
    return re.sub(r"[{}\s]|\\text", "", text).lower()


def _is_constant(text: str) -> bool:
    return not re.search(r"[A-Za-z]", re.sub(r"\\(?:frac|sqrt|cdot|times|pi|left|right|div)", "", text))


def _strip_brackets(text: str) -> str:
    """``text`` without the contents of brackets (so ``f(x<1)`` is not read as a relation)."""
    out, depth = [], 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(char)
    return "".join(out)


def _bracketed(text: str) -> Value | None:
    """``(a, b)``, ``[a, b)``, ``\\{a, b\\}``, ``{a, b}``, ``\\langle a, b \\rangle``, ``()``."""
    if text.startswith("\\langle") and text.endswith("\\rangle"):
        inner, brackets, kind = text[len("\\langle") : -len("\\rangle")], "()", "tuple"
    elif text.startswith("\\{") and text.endswith("\\}") and _balanced(text[2:-2]):
        inner, brackets, kind = text[2:-2], "{}", "set"
    elif text[:1] in _OPENERS and text[-1:] in ")]}" and _closes_at_end(text):
        inner, brackets = text[1:-1], text[0] + text[-1]
        kind = "list" if brackets == "{}" else ("tuple" if brackets in ("()", "[]") else "interval")
    else:
        return None
    parts = split_top_level(inner, (",", ";"))
    if len(parts) == 1:
        if not parts[0].strip():
            return Items((), kind, brackets)  # "()", "[]", "\{\}"
        if kind in ("set", "list") or brackets == "()":
            value = _group(parts[0])
            return Items((value,), "set", brackets) if kind == "set" else value
        return None  # "[x]" and the like: leave to the LaTeX parser
    items = tuple(_flatten([_element(p) if p.strip() else _missing() for p in parts]))
    if kind == "tuple" and len(items) == 2 and brackets == "()":
        return Items(items, "tuple", brackets)
    return Items(items, kind, brackets)


_MATRIX = re.compile(
    r"^\\begin\{(pmatrix|bmatrix|Bmatrix|matrix|smallmatrix)\}(.*)\\end\{\1\}$"
    r"|^\\begin\{array\}\s*\{[lcr|\s]*\}(.*)\\end\{array\}$",
    re.DOTALL,
)


def _matrix(text: str) -> Value | None:
    """A written matrix, entry by entry, with the precision each entry was written with (sympy's
    matrix of floats forgets that ``0.8660`` showed four places): the shape ``compare`` gives a
    sympy matrix, a vector when it has one row or one column, else a tuple of row tuples.
    Determinants (``vmatrix``) and matrix arithmetic are left to the LaTeX parser."""
    match = _MATRIX.match(text)
    if match is None:
        return None
    body = match.group(2) if match.group(2) is not None else match.group(3)
    rows = [row for row in split_top_level(body, ("\\\\",)) if row.strip()]
    if not rows:
        return None
    table = [[entry.strip() for entry in split_top_level(row, ("&",))] for row in rows]
    if len({len(row) for row in table}) != 1 or any(not entry for row in table for entry in row):
        return None  # ragged or with an empty entry: not a matrix this reader trusts
    try:
        values = [[_element(entry) for entry in row] for row in table]
    except Unparseable:
        return None
    if len(values) == 1 or len(values[0]) == 1:
        return Items(tuple(value for row in values for value in row), "vector", "()")
    return Items(tuple(Items(tuple(row), "tuple", "[]") for row in values), "tuple", "[]")


def _missing() -> Value:
    raise Unparseable("empty element in a bracket")


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _closes_at_end(text: str) -> bool:
    """The bracket opening at ``text[0]`` closes at the last character, not before."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
    return depth == 0


# -- leaves ----------------------------------------------------------------------------------------

_UNIT_TEXT = re.compile(r"^(.*?\S)\s*\\text\{[^{}]*\}\s*(?:\^\s*\{?\d\}?)?$")
_UNIT_WORDS = re.compile(r"^(.*?[\d}])((?:\s*[A-Za-z]{2,}\.?)+|\s+[mgslhLNJWVK]\.?)\s*(?:\^\s*\{?\d\}?)?$")
# Words no unit holds, which turn "42 \\text{ is wrong}" from a number with a unit into a claim about it:
# the answer denied inside the box (falsepass's P15), not 42 cm.
_DENIAL = re.compile(r"(?<![A-Za-z])(?:not|no|wrong|incorrect|false|is|isn't|are|was|never)(?![A-Za-z])", re.IGNORECASE)
_CURRENCY = re.compile(r"^[€£¥₹]\s*|\s*(?:[€£¥₹]|\\euro)$")
_PERCENT = re.compile(r"\s*\\%$")
_DEGREES = re.compile(r"\s*\^\\circ$")
_PLUS_MINUS = re.compile(r"\\pm(?![a-z])|\\mp(?![a-z])")
_BASE = re.compile(r"^(\d+)_\{?(\d+)\}?$")


def _leaf(text: str) -> Value:
    percent = degrees = False
    text = _CURRENCY.sub("", text).strip()
    for _ in range(3):  # "15\mbox{ cm}^2", "125 miles", "0.06 \text{ yuan}"
        unit = _UNIT_TEXT.match(text)
        if unit is None and not _WORDS.match(text):
            unit = _UNIT_WORDS.match(text)
            if unit is not None and not _is_constant(unit.group(1)):
                unit = None  # "x + 2 y": a variable, not a unit
        if unit is None or not _is_unit_host(unit.group(1)) or _DENIAL.search(text[len(unit.group(1)) :]):
            break
        text = unit.group(1).strip()
    if _PERCENT.search(text):
        text, percent = _PERCENT.sub("", text), True
    if _DEGREES.search(text):
        text, degrees = _DEGREES.sub("", text), True
    wrapped = _TEXT_WRAPPED.match(text)
    if wrapped:
        inner = wrapped.group(1).strip()
        if _WORDS.match(inner) and len(inner) > 1:
            return Text(_fold_words(inner))
        text = inner
    if _WORDS.match(text):
        words = [w for w in re.split(r"[\s\-']", text) if w]
        if any(len(w) > 2 and w.lower() not in _MATH_WORDS for w in words):
            return Text(_fold_words(text))
        if len(words) == 1 and len(words[0]) == 2 and words[0].lower() not in _MATH_WORDS:
            return Either((Text(_fold_words(text)), Sym(_sympy(text))))  # "no", or the product "ab"
    number = read_number(text, percent, degrees)
    if number is not None:
        return number
    base = _BASE.match(text)
    if base:
        return Num(Fraction(int(base.group(1))), None, percent, degrees, int(base.group(2)))
    if _PLUS_MINUS.search(text):
        return _plus_minus(text, percent, degrees)
    expr = _sympy(text)
    if isinstance(expr, sympy.FiniteSet) and not percent and not degrees:
        return Items(tuple(Sym(e) for e in expr.args), "set", "\\pm" if "\\pm" in text else "{}")
    return Sym(expr, percent, degrees)


def _plus_minus(text: str, percent: bool, degrees: bool) -> Value:
    """``\\frac{-1 \\pm \\sqrt{13}}{4}``: the set of both signs (at most two ± per answer)."""
    if len(_PLUS_MINUS.findall(text)) > 2:
        raise Unparseable("too many \\pm signs")
    variants = [text]
    while any(_PLUS_MINUS.search(v) for v in variants):
        expanded = []
        for variant in variants:
            match = _PLUS_MINUS.search(variant)
            if match is None:
                expanded.append(variant)
                continue
            first, second = ("+", "-") if match.group(0) == "\\pm" else ("-", "+")
            expanded += [
                variant[: match.start()] + first + variant[match.end() :],
                variant[: match.start()] + second + variant[match.end() :],
            ]
        variants = expanded
    values = tuple(Sym(_sympy(v.strip() or "0"), percent, degrees) for v in variants)
    return Items(values, "set", "\\pm")


def _is_unit_host(text: str) -> bool:
    """A unit may only be dropped from something that is left a number or formula."""
    return bool(text) and not text.rstrip().endswith(("+", "-", "=", "(", ",", "\\"))


def _fold_words(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").split())


def _sympy(text: str) -> object:
    """A LaTeX leaf through math-verify's normalization and parser (latex2sympy2, ANTLR)."""
    latex = normalize_latex(text, _LATEX)
    if not latex:
        raise Unparseable("empty formula")
    if "\\\\" in latex and "matrix" not in latex and "array" not in latex:
        raise Unparseable("stray line break inside a formula")  # "4\\sqrt{2}" must not read as 4
    expr = latex2sympy(
        latex, is_real=not should_treat_as_complex(latex), convert_degrees=False, normalization_config=None
    )
    if isinstance(expr, sympy.Basic) and expr.has(sympy.UnevaluatedExpr):  # "7.2\\% + 1": a plain 1/100
        expr = expr.xreplace({u: u.args[0] for u in expr.atoms(sympy.UnevaluatedExpr)})
    imaginary = [s for s in getattr(expr, "free_symbols", ()) if s.name == "i"]
    if imaginary and should_treat_as_complex(latex):
        expr = expr.xreplace({imaginary[0]: sympy.I})  # a complex context: i is the imaginary unit
    if isinstance(expr, sympy.MatrixExpr) and not isinstance(expr, sympy.MatrixBase):
        expr = expr.doit()  # "A + B" of two written matrices
    if isinstance(expr, sympy.MatrixBase):
        return sympy.ImmutableMatrix(expr)
    return expr
