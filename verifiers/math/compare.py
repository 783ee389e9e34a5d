"""Is the answer the gold? Equivalence of two value trees under an explicit :class:`Policy`.

The rules, each chosen so that a wrong answer never scores (precision first) while the many
spellings of a right one do:

- numbers are exact fractions: ``1/2^{99}`` is not ``1/2^{98}``; ``5.0`` is ``5``. A decimal gold
  states its precision (``85.71`` accepts ``600/7``); a decimal answer to an exact gold is accepted
  when it has ``decimal_places`` digits (``0.333333`` is ``1/3``), or, when the gold has no exact
  decimal (``600/7``, ``\\sqrt{2}``), when it is the gold correctly rounded to the places shown
  with at least ``rounded_digits`` significant digits (``85.71`` is ``600/7``; ``0.33`` is not
  ``1/3``; ``0.13`` is never ``1/8``, which could have been written exactly).
- percent: ``28%`` against ``28`` or ``0.28`` is decided by ``percent``, never by accident.
- degrees: ``90^\\circ`` is ``\\pi/2`` when the other side is in radians.
- tuples and intervals are ordered and keep their brackets (``[0,9)`` is not ``(0,9)``); sets and
  bare lists are not ordered; a tuple is never a set. ``order`` can override.
- parts: a gold boxed in several places that prose separates (``(a) \\boxed{3} ... (b) \\boxed{5}``)
  is a multi-part answer; every part must be answered, in order (``5`` alone is not ``3`` and ``5``).
- labels: ``x = 5`` is ``5``; ``w=16, d=3`` is ``16, 3`` in that order; two labelled answers must
  agree label by label. An equation that is not a labelled value (``7 = 11a + c``) is never its
  right-hand side.
- equations are equal when one is a nonzero multiple of the other (``y = -x/2 + 3/4`` is
  ``2x + 4y - 3 = 0``), inequalities when the multiple is positive; a relation in one variable
  equals the set it describes (``-1 < x < 1`` is ``(-1, 1)``) when ``relations_as_sets`` allows.
- variables may be renamed as ``rename_variables`` allows (``f(z)=z`` is ``f(x)=x``).

:func:`equivalent` returns the name of the rule that matched, or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import sympy

from .closed_form import surd
from .parse import parse_normalized
from .symbolic import (
    constants_close,
    equal_expressions,
    exact_decimals,
    is_constant,
    proportional,
    rebuild,
    rename_candidates,
)
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

__all__ = ["Incomparable", "Policy", "equivalent"]


class Incomparable(ValueError):
    """sympy failed on an operation the comparison needed: no verdict either way."""


@dataclass(frozen=True)
class Policy:
    percent: Literal["either", "fraction", "number"] = "either"
    decimal_places: int = 6
    gold_precision: bool = True
    relative_tolerance: float = 0.0
    order: Literal["auto", "ordered", "unordered"] = "auto"
    rename_variables: Literal["never", "bound", "always"] = "bound"
    relations_as_sets: bool = True
    rounded_digits: int = 4


def equivalent(gold: Value, answer: Value, policy: Policy) -> str | None:
    """The rule by which ``answer`` equals ``gold``, or None if it does not; raises
    :class:`Incomparable` when sympy fails on the way (an error, never a silent 0)."""
    try:
        return _equal(gold, answer, policy)
    except (TypeError, ValueError, AttributeError, ZeroDivisionError, NotImplementedError) as exc:
        raise Incomparable(f"{type(exc).__name__}: {str(exc)[:200]}") from exc


def _equal(g: Value, a: Value, p: Policy) -> str | None:
    if isinstance(g, Either):
        return next((r for r in (_equal(o, a, p) for o in g.options) if r), None)
    if isinstance(a, Either):
        return next((r for r in (_equal(g, o, p) for o in a.options) if r), None)
    if isinstance(g, Choice) or isinstance(a, Choice):
        return _choices(g, a, p)
    if isinstance(g, Labeled) or isinstance(a, Labeled):
        return _labels(g, a, p)
    if isinstance(g, Text) or isinstance(a, Text):
        return "words" if isinstance(g, Text) and isinstance(a, Text) and g.words == a.words else None
    if isinstance(g, Time) or isinstance(a, Time):
        return "time" if isinstance(g, Time) and isinstance(a, Time) and _same_time(g, a) else None
    if isinstance(g, Relation) or isinstance(a, Relation):
        return _relations(g, a, p)
    if _is_collection(g) or _is_collection(a):
        return _collections(g, a, p)
    return _scalars(g, a, p)


# -- choices, labels, times ------------------------------------------------------------------------


def _choices(g: Value, a: Value, p: Policy) -> str | None:
    if isinstance(g, Choice) and isinstance(a, Choice):
        return "choice" if g.letter == a.letter else None
    if isinstance(g, Choice):
        return _equal(g.option, a, p) if g.option is not None else None
    assert isinstance(a, Choice)
    return _equal(g, a.option, p) if a.option is not None else None


def _labels(g: Value, a: Value, p: Policy) -> str | None:
    if isinstance(g, Labeled) and isinstance(a, Labeled):
        if g.label == a.label:
            return _equal(g.value, a.value, p)
        return _relations(_as_equation(g), _as_equation(a), p)
    if isinstance(g, Labeled):
        return _relations(_as_equation(g), a, p) if isinstance(a, Relation) else _equal(g.value, a, p)
    assert isinstance(a, Labeled)
    return _relations(g, _as_equation(a), p) if isinstance(g, Relation) else _equal(g, a.value, p)


def _as_equation(labeled: Labeled) -> Value:
    """``x = 5`` as the equation it also is (to compare with an equation gold)."""
    try:
        name = parse_normalized(labeled.label)
    except Unparseable:
        return labeled
    value = _sympy_of(labeled.value)
    if not isinstance(name, Sym) or value is None or isinstance(value, sympy.Set):
        return labeled
    return Relation(sympy.Eq(name.expr, value, evaluate=False))


def _same_time(g: Time, a: Time) -> bool:
    if g.minute != a.minute:
        return False
    if g.meridiem and a.meridiem:
        return g.hour % 12 == a.hour % 12 and g.meridiem == a.meridiem
    pm = g.meridiem == "p" or a.meridiem == "p"
    hours = {g.hour, a.hour}
    return len(hours) == 1 or (pm and max(hours) - min(hours) == 12)


# -- relations -------------------------------------------------------------------------------------

_FLIP = {sympy.StrictLessThan: sympy.StrictGreaterThan, sympy.LessThan: sympy.GreaterThan}


def _relations(g: Value, a: Value, p: Policy) -> str | None:
    if isinstance(g, Relation) and isinstance(a, Relation):
        if _same_relation(g.expr, a.expr, p):
            return "relation"
        return "relation set" if _relation_sets_equal(g, a) else None
    if isinstance(g, Relation) and isinstance(a, Labeled | Items | Sym):
        target = a.value if isinstance(a, Labeled) else a
        return "relation set" if _relation_equals_set(g, target) else None
    if isinstance(a, Relation) and p.relations_as_sets and isinstance(g, Labeled | Items | Sym):
        target = g.value if isinstance(g, Labeled) else g
        return "relation set" if _relation_equals_set(a, target) else None
    return None


def _canonical(rel: Any) -> tuple[str, Any] | None:
    """``(kind, e)`` with the relation read as ``e > 0``, ``e >= 0``, ``e = 0`` or ``e != 0``."""
    kinds = {
        sympy.StrictGreaterThan: ">",
        sympy.GreaterThan: ">=",
        sympy.Equality: "=",
        sympy.Unequality: "!=",
    }
    if type(rel) in _FLIP:
        return (">" if type(rel) is sympy.StrictLessThan else ">="), rel.rhs - rel.lhs
    if type(rel) in kinds:
        return kinds[type(rel)], rel.lhs - rel.rhs
    return None


def _same_relation(g: Any, a: Any, p: Policy) -> bool:
    if isinstance(g, sympy.And) and isinstance(a, sympy.And):
        gs, as_ = list(g.args), list(a.args)
        return len(gs) == len(as_) and all(any(_same_relation(x, y, p) for y in as_) for x in gs)
    cg, ca = _canonical(g), _canonical(a)
    if cg is None or ca is None or cg[0] != ca[0]:
        return False
    definition = isinstance(g, sympy.Eq) and isinstance(g.lhs, sympy.core.function.AppliedUndef)
    candidates = [ca[1], *rename_candidates(cg[1], ca[1], p.rename_variables, definition)]
    for expr in candidates:
        if not cg[1].free_symbols:
            if rebuild(cg[1]) == rebuild(expr):
                return True  # "f(2) < f(1) < f(4)": constants compared as written
            continue
        if cg[1].free_symbols != expr.free_symbols:
            continue
        ratio = proportional(cg[1], expr)
        if ratio is not None and (cg[0] in ("=", "!=") or ratio > 0):
            return True
    return False


def _univariate_set(relation: Relation) -> Any | None:
    expr = relation.expr
    if expr.atoms(sympy.core.function.AppliedUndef):
        expr = expr.xreplace(
            {f: sympy.Symbol(f"_{f.func}", real=True) for f in expr.atoms(sympy.core.function.AppliedUndef)}
        )
    symbols = expr.free_symbols
    if len(symbols) != 1:
        return None
    try:
        return expr.as_set()
    except (NotImplementedError, TypeError, ValueError, AttributeError):
        return None


def _relation_sets_equal(g: Relation, a: Relation) -> bool:
    """Two relations in the same single variable describe the same set (``x = 4`` is never
    ``y = 4``)."""
    if g.expr.free_symbols != a.expr.free_symbols:
        return False
    gs, as_ = _univariate_set(g), _univariate_set(a)
    return gs is not None and as_ is not None and _sympy_sets_equal(gs, as_)


def _relation_equals_set(relation: Relation, target: Value) -> bool:
    described = _univariate_set(relation)
    actual = _as_sympy_set(target)
    return described is not None and actual is not None and _sympy_sets_equal(described, actual)


# -- collections -----------------------------------------------------------------------------------


def _is_collection(value: Value) -> bool:
    if isinstance(value, Items):
        return True
    return isinstance(value, Sym) and isinstance(value.expr, sympy.Set | sympy.MatrixBase | sympy.Tuple)


def _collections(g: Value, a: Value, p: Policy) -> str | None:
    if isinstance(g, Sym) and isinstance(g.expr, sympy.Set) or isinstance(a, Sym) and isinstance(a.expr, sympy.Set):
        gs, as_ = _as_sympy_set(g), _as_sympy_set(a)
        return "set" if gs is not None and as_ is not None and _sympy_sets_equal(gs, as_) else None
    gi, ai = _as_items(g), _as_items(a)
    if gi is not None and ai is not None:
        gi, ai = _extremes_in_order(gi, ai), _extremes_in_order(ai, gi)
        if gi is None or ai is None:
            return None
    if gi is None or ai is None:
        # a one-element list or set against a scalar: "\boxed{5}, \boxed{5}" is 5
        single = gi if ai is None else ai
        other = a if ai is None else g
        if single is not None and single.kind in ("list", "set") and len(_distinct(single.items)) == 1:
            return _equal(single.items[0], other, p) if ai is None else _equal(other, single.items[0], p)
        return None
    ordered = _ordered(gi, ai, p)
    if ordered is None:
        return None
    if ordered:
        if len(gi.items) != len(ai.items):
            return None
        pairs = _by_label(gi.items, ai.items)
        return "sequence" if all(_equal(x, y, p) for x, y in pairs) else None
    gs, as_ = _distinct(gi.items), _distinct(ai.items)
    if len(gs) > 64 or len(as_) > 64:
        return None
    if all(any(_equal(x, y, p) for y in as_) for x in gs) and all(any(_equal(x, y, p) for x in gs) for y in as_):
        return "set"
    return None


_MAX_LABEL = re.compile(r"(?:the)?(?:max|maximum|largest|greatest|highest)(?:value)?")
_MIN_LABEL = re.compile(r"(?:the)?(?:min|minimum|smallest|least|lowest)(?:value)?")


def _extremes_in_order(side: Items, other: Items) -> Items | None:
    """``Maximum = 2, Minimum = 1`` against an unlabelled pair: the values as the list (min, max).

    The labels say which value is which, so the pair can meet a gold written in either order
    (a bare list is unordered); a maximum below its minimum is no answer (None). Anything else
    comes back unchanged.
    """
    if len(side.items) != 2 or any(isinstance(v, Labeled) for v in other.items):
        return side
    labels = [v.label.lower() if isinstance(v, Labeled) else "" for v in side.items]
    kinds = ["max" if _MAX_LABEL.fullmatch(x) else "min" if _MIN_LABEL.fullmatch(x) else "" for x in labels]
    if sorted(kinds) != ["max", "min"]:
        return side
    low, high = (side.items[kinds.index("min")], side.items[kinds.index("max")])
    assert isinstance(low, Labeled) and isinstance(high, Labeled)
    lv, hv = _sympy_of(low.value), _sympy_of(high.value)
    if lv is None or hv is None or not (is_constant(lv) and is_constant(hv)):
        return side
    if bool((hv - lv).is_negative):
        return None
    return Items((low.value, high.value), "list", "")


def _ordered(g: Items, a: Items, p: Policy) -> bool | None:
    """Whether the two are compared in order, or None when they cannot be the same thing."""
    if "parts" in (g.kind, a.kind):
        # the answers to part (a), part (b)...: in the parts' order, never as a set or an interval
        other = a if g.kind == "parts" else g
        return None if other.kind in ("set", "interval") else True
    if "vector" in (g.kind, a.kind) and "set" not in (g.kind, a.kind):
        return True
    if "interval" in (g.kind, a.kind) or (g.kind == a.kind == "tuple"):
        return True if g.brackets == a.brackets or {g.brackets, a.brackets} <= {"()", ""} else None
    if p.order == "ordered" and "set" not in (g.kind, a.kind):
        return True
    if p.order == "unordered":
        return False
    if g.kind == "tuple" or a.kind == "tuple":
        other = a if g.kind == "tuple" else g
        return True if other.kind in ("list", "vector") else None  # a tuple is never a set
    if _record(g.items) and not any(isinstance(v, Labeled) for v in a.items):
        return True  # "w=16, d=3" against "16, 3"
    if _record(a.items) and not any(isinstance(v, Labeled) for v in g.items):
        return True
    return False


def _record(values: tuple[Value, ...]) -> bool:
    labels = [v.label for v in values if isinstance(v, Labeled)]
    return len(labels) == len(values) > 1 and len(set(labels)) == len(labels)


def _by_label(g: tuple[Value, ...], a: tuple[Value, ...]) -> list[tuple[Value, Value]]:
    """Pairs to compare: by label when both sides label the same names, else in order."""
    if _record(g) and _record(a):
        g_map = {v.label: v for v in g if isinstance(v, Labeled)}
        a_map = {v.label: v for v in a if isinstance(v, Labeled)}
        if set(g_map) == set(a_map):
            return [(g_map[k], a_map[k]) for k in g_map]
    return list(zip(g, a, strict=True))


def _distinct(values: tuple[Value, ...]) -> list[Value]:
    seen: list[Value] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


def _as_items(value: Value) -> Items | None:
    if isinstance(value, Items):
        return value
    if isinstance(value, Sym) and isinstance(value.expr, sympy.MatrixBase):
        matrix = value.expr
        if 1 in matrix.shape:
            return Items(tuple(Sym(e) for e in matrix), "vector", "()")
        return Items(tuple(Items(tuple(Sym(e) for e in row), "tuple", "[]") for row in matrix.tolist()), "tuple", "[]")
    return None


def _as_sympy_set(value: Value) -> Any | None:
    if isinstance(value, Labeled):
        return _as_sympy_set(value.value)
    if isinstance(value, Sym) and isinstance(value.expr, sympy.Set):
        return value.expr
    if isinstance(value, Items):
        if value.kind in ("interval", "tuple") and len(value.items) == 2 and value.brackets in ("()", "[]", "(]", "[)"):
            start, end = _sympy_of(value.items[0]), _sympy_of(value.items[1])
            if start is None or end is None:
                return None
            return sympy.Interval(start, end, value.brackets[0] == "(", value.brackets[1] == ")")
        if value.kind == "list" and value.items and all(isinstance(v, Relation) for v in value.items):
            parts = [_univariate_set(v) for v in value.items]  # "x < -8 or x > 8"
            return None if any(s is None for s in parts) else sympy.Union(*parts)
        if value.kind == "list" and any(isinstance(v, Relation) for v in value.items):
            return _alternatives_set(value.items)  # "a <= -2 or a = 1"
        if value.kind in ("set", "list"):
            elements = [_sympy_of(v) for v in value.items]
            return None if any(e is None for e in elements) else sympy.FiniteSet(*elements)
        return None
    element = _sympy_of(value)
    return None if element is None else sympy.FiniteSet(element)


def _alternatives_set(items: tuple[Value, ...]) -> Any | None:
    """The set that relations and labelled values of one variable describe together
    (``a \\le -2`` or ``a = 1`` is ``(-\\infty, -2] \\cup \\{1\\}``), or None when they speak of
    different variables or something else is in the list."""
    relations = [v for v in items if isinstance(v, Relation)]
    names = {str(s).lower() for r in relations for s in r.expr.free_symbols}
    if len(names) != 1 or any(len(r.expr.free_symbols) != 1 for r in relations):
        return None
    parts = []
    for item in items:
        if isinstance(item, Relation):
            part = _univariate_set(item)
        elif isinstance(item, Labeled) and item.label.lower() in names:
            value = _sympy_of(item.value)
            part = None if value is None or isinstance(value, sympy.Set) else sympy.FiniteSet(value)
        else:
            return None
        if part is None:
            return None
        parts.append(part)
    return sympy.Union(*parts)


def _sympy_sets_equal(g: Any, a: Any) -> bool:
    if g == a:
        return True
    if isinstance(g, sympy.Interval) and isinstance(a, sympy.Interval):
        return (
            g.left_open == a.left_open
            and g.right_open == a.right_open
            and _constants_equal(g.start, a.start)
            and _constants_equal(g.end, a.end)
        )
    if isinstance(g, sympy.Union) and isinstance(a, sympy.Union) and len(g.args) == len(a.args):
        if all(_sympy_sets_equal(x, y) for x, y in zip(g.args, a.args, strict=True)):
            return True
    try:
        return bool(g.symmetric_difference(a).is_empty)
    except (TypeError, ValueError, NotImplementedError, AttributeError):
        return False


def _constants_equal(x: Any, y: Any) -> bool:
    return x == y or (
        is_constant(x) and is_constant(y) and not (x.is_Rational and y.is_Rational) and constants_close(x, y)
    )


# -- scalars: numbers and expressions --------------------------------------------------------------


def _scalars(g: Value, a: Value, p: Policy) -> str | None:
    if not isinstance(g, Num | Sym) or not isinstance(a, Num | Sym) or not _same_base(g, a):
        return None
    for gv, av in _percent_readings(g, a, p):
        for gx, ax in _degree_readings(gv, av, g, a):
            found = _values(gx, _decimals(g), ax, _decimals(a), p)
            if found:
                return found
    return None


def _percent_readings(g: Num | Sym, a: Num | Sym, p: Policy) -> list[tuple[Any, Any]]:
    gv, av = _raw(g), _raw(a)
    if g.percent == a.percent or p.percent == "number":
        return [(gv, av)]
    scaled = (gv / 100, av) if g.percent else (gv, av / 100)
    return [scaled] if p.percent == "fraction" else [(gv, av), scaled]


def _degree_readings(gv: Any, av: Any, g: Num | Sym, a: Num | Sym) -> list[tuple[Any, Any]]:
    """Degrees against radians (the other side mentions pi) convert; otherwise the mark is a unit."""
    if g.degrees == a.degrees:
        return [(gv, av)]
    radians = a if g.degrees else g
    if isinstance(radians, Sym) and radians.expr.has(sympy.pi):
        return [(_sympy(gv) * sympy.pi / 180, av)] if g.degrees else [(gv, _sympy(av) * sympy.pi / 180)]
    return [(gv, av)]


def _raw(value: Num | Sym) -> Any:
    return value.value if isinstance(value, Num) else value.expr


def _decimals(value: Num | Sym) -> int | None:
    if isinstance(value, Num):
        return value.decimals
    if isinstance(value.expr, sympy.Float):
        text = format(value.expr, "f").rstrip("0")
        return len(text.split(".", 1)[1]) if "." in text else 0
    return None


def _same_base(g: Num | Sym, a: Num | Sym) -> bool:
    """``25_6`` is not ``25_7``; a base written on one side only is a unit left off."""
    gb = g.base if isinstance(g, Num) else None
    ab = a.base if isinstance(a, Num) else None
    return gb is None or ab is None or gb == ab


def _values(g: Any, gd: int | None, a: Any, ad: int | None, p: Policy) -> str | None:
    if isinstance(g, Fraction) and isinstance(a, Fraction):
        return "number" if _numbers_close(g, gd, a, ad, p) else None
    ge, ae = exact_decimals(_sympy(g)), exact_decimals(_sympy(a))
    if is_constant(ge) and is_constant(ae):
        ge, ae = rebuild(ge), rebuild(ae)  # 1/2^{99} becomes the exact rational it is
        gf, af = _exact(ge), _exact(ae)
        if gf is not None and af is not None:
            return "number" if _numbers_close(gf, gd, af, ad, p) else None
        if (gd is not None or ad is not None or p.relative_tolerance) and _irrational_close(ge, gd, ae, ad, p):
            return "number"
    found = equal_expressions(ge, ae)
    if found:
        return found
    for renamed in rename_candidates(ge, ae, p.rename_variables):
        found = equal_expressions(ge, renamed)
        if found:
            return "renamed " + found
    return None


def _exact(expr: Any) -> Fraction | None:
    """The exact rational value, also of a rational written with square roots
    (``(2+\\sqrt{3})^{4}+(2-\\sqrt{3})^{4}`` is 194), else None."""
    if isinstance(expr, sympy.Rational):
        return Fraction(int(expr.p), int(expr.q))
    if isinstance(expr, sympy.Float):
        return Fraction(format(expr, "f"))
    value = surd(expr) if expr.has(sympy.Pow) else None
    if value is not None and set(value) <= {frozenset()}:
        return value.get(frozenset(), Fraction(0))
    return None


def _numbers_close(g: Fraction, gd: int | None, a: Fraction, ad: int | None, p: Policy) -> bool:
    if g == a:
        return True
    if p.relative_tolerance and abs(g - a) <= Fraction(p.relative_tolerance) * max(abs(g), abs(a)):
        return True
    if gd is not None and p.gold_precision and (ad is None or ad > gd):
        return abs(a - g) <= Fraction(1, 2 * 10**gd)  # the gold is rounded to gd places
    if ad is not None and gd is None and ad >= p.decimal_places:
        return abs(a - g) <= Fraction(1, 10**ad)  # the answer is rounded to ad places (one unit of slack)
    if ad is not None and gd is None and p.rounded_digits and not _terminates(g):
        # 85.71 for 600/7: no exact decimal exists, so a correctly rounded one with enough digits is the answer
        return _significant_digits(a, ad) >= p.rounded_digits and abs(a - g) <= Fraction(1, 2 * 10**ad)
    return False


def _terminates(value: Fraction) -> bool:
    """Whether the value has a finite decimal expansion (its denominator has no prime but 2 and 5)."""
    q = value.denominator
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def _significant_digits(value: Fraction, places: int) -> int:
    """Digits shown from the first nonzero one: 85.71 has 4, 0.0012 has 2."""
    return len(str(int(abs(value) * 10**places)).lstrip("0")) or 1


def _irrational_close(ge: Any, gd: int | None, ae: Any, ad: int | None, p: Policy) -> bool:
    """A decimal against an irrational constant (``4.1231056`` and ``\\sqrt{17}``)."""
    difference = abs(sympy.N(ge - ae, 60))
    if p.relative_tolerance and difference <= p.relative_tolerance * max(abs(sympy.N(ge, 60)), abs(sympy.N(ae, 60))):
        return True
    if gd is not None and p.gold_precision and ad is None:
        return bool(difference <= sympy.Rational(1, 2 * 10**gd))
    if ad is not None and gd is None and ad >= p.decimal_places:
        return bool(difference <= sympy.Rational(1, 10**ad))
    shown = _exact(ae) if ad is not None else None
    if shown is not None and gd is None and p.rounded_digits:  # 1.414 for \sqrt{2}
        assert ad is not None
        return _significant_digits(shown, ad) >= p.rounded_digits and bool(difference <= sympy.Rational(1, 2 * 10**ad))
    return False


def _sympy(value: Any) -> Any:
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return value


def _sympy_of(value: Value) -> Any | None:
    if isinstance(value, Num):
        expr = _sympy(value.value)
        return expr / 100 if value.percent else expr
    if isinstance(value, Sym):
        return value.expr
    return None
