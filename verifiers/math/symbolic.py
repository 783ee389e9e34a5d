"""Equality of sympy expressions without false positives: exact where it can be, numeric where it
must be, and never ``chop``.

math-verify compares with ``(a - b).evalf(chop=True) == 0``, which declares ``1/2^{99}`` equal to
``1/2^{98}`` (both chop to zero). Here rationals compare exactly, sums of square roots exactly too,
other constants numerically at a precision that resolves every term of every sum, with a stated
tolerance (``closed_form``: ``(2+\\sqrt{3})^{100}`` is not ``(2+\\sqrt{3})^{100}+(2-\\sqrt{3})^{100}``,
10^-114 apart relatively), and expressions with variables are
equal when ``simplify`` proves ``a - b == 0`` or when they agree to 1e-25 at six fixed probe points
(which catches identities ``simplify`` misses, such as ``\\tan^2 y + 1`` and ``\\sec^2 y``).

Integrals, sums, products and limits are compared structurally only: evaluating them is where
sympy hangs.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import sympy
from sympy.core.function import AppliedUndef

from .closed_form import numerically_equal, surds_equal

__all__ = [
    "constants_close",
    "constants_equal",
    "equal_expressions",
    "exact_decimals",
    "is_constant",
    "proportional",
    "rebuild",
    "rename_candidates",
    "to_fraction",
]

_PROBE_RELATIVE = sympy.Float("1e-25", 40)
_TINY = sympy.Float("1e-30", 40)
_PROBES = (
    sympy.Rational(3, 7),
    sympy.Rational(-5, 11),
    sympy.Rational(13, 17),
    sympy.Rational(7, 3),
    sympy.Rational(-19, 9),
    sympy.Rational(29, 13),
)
_UNEVALUATED = (sympy.Integral, sympy.Sum, sympy.Product, sympy.Limit, sympy.Derivative)
_BOUND_NAMES = frozenset("k n m j l t".split())


def is_constant(expr: Any) -> bool:
    return isinstance(expr, sympy.Basic) and not expr.free_symbols and not expr.atoms(AppliedUndef)


def to_fraction(expr: Any) -> Fraction | None:
    """The exact value of a rational constant, else None."""
    try:
        value = sympy.nsimplify(expr, rational=False) if isinstance(expr, sympy.Float) else expr
        if isinstance(value, sympy.Basic) and not value.free_symbols:
            value = sympy.simplify(value) if not value.is_Rational else value
        if isinstance(value, sympy.Rational):
            return Fraction(int(value.p), int(value.q))
    except (TypeError, ValueError, AttributeError):
        return None
    return None


def constants_close(a: Any, b: Any) -> bool:
    """Two constant expressions are equal: exactly, when both are sums of rational multiples of
    square roots; else numerically, at a precision that resolves every term of every sum
    (``closed_form``). No verdict is not equal."""
    return constants_equal(a, b) is not None


def constants_equal(a: Any, b: Any) -> str | None:
    """How two constant expressions were shown equal ("exact" or "numeric"), or None."""
    exact = surds_equal(a, b)
    if exact is not None:
        return "exact" if exact else None
    return "numeric" if numerically_equal(a, b) else None


def equal_expressions(a: Any, b: Any) -> str | None:
    """How ``a`` and ``b`` (sympy, possibly with variables) were shown equal, or None."""
    if a == b:
        return "identical"
    a, b = rebuild(a), rebuild(b)
    if a == b:
        return "identical"
    if a.has(*_UNEVALUATED) or b.has(*_UNEVALUATED):
        return None  # compared structurally only
    if is_constant(a) and is_constant(b):
        if a.is_Rational and b.is_Rational:
            return None  # distinct rationals: a == b above was the exact test
        return constants_equal(a, b)
    verdict = _agree_at_probes(a, b)
    if verdict is False:
        return None  # cheap and decisive: most wrong answers stop here, before simplify
    try:
        difference = sympy.simplify(a - b)
        if difference == 0:
            return "symbolic"
        if is_constant(difference):
            return None  # "x + 10^{-30}" is not "x", however close the probes come
    except (TypeError, ValueError, AttributeError, NotImplementedError, ZeroDivisionError):
        pass
    return "numeric" if verdict else None


def exact_decimals(expr: Any) -> Any:
    """Decimal literals as the exact rationals they spell (``10.5`` is ``21/2``), so that
    ``10\\sqrt{10.5}`` is exactly ``5\\sqrt{42}`` and no binary rounding leaks into a comparison."""
    if not isinstance(expr, sympy.Basic):
        return expr
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    return expr.xreplace({f: sympy.Rational(str(f)) for f in floats if f.is_finite})


def rebuild(expr: Any) -> Any:
    """``expr`` rebuilt bottom-up with sympy's automatic canonical ordering and arithmetic on
    numbers (the LaTeX parser builds unevaluated trees). Integrals, sums and limits stay
    unevaluated: their constructors do not compute them."""
    if not isinstance(expr, sympy.Basic) or not expr.args or isinstance(expr, sympy.MatrixBase):
        return expr
    try:
        return expr.func(*(rebuild(arg) for arg in expr.args))
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return expr


def _agree_at_probes(a: Any, b: Any) -> bool | None:
    """Whether ``a`` and ``b`` agree at the probe points: True, False, or None when the probes
    cannot tell (undefined functions, too few points where both are finite)."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    if not symbols or a.atoms(AppliedUndef) or b.atoms(AppliedUndef):
        return None
    agreed = 0
    for point in _points(symbols):
        try:
            va, vb = sympy.N(a.subs(point), 40), sympy.N(b.subs(point), 40)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
        finite_a, finite_b = _finite(va), _finite(vb)
        if finite_a != finite_b:
            return False
        if not finite_a:
            continue
        if abs(va - vb) > _PROBE_RELATIVE * max(abs(va), abs(vb), _TINY):
            return False
        agreed += 1
    return True if agreed >= 4 else None


def _points(symbols: list[Any]) -> list[dict[Any, Any]]:
    return [{s: _PROBES[(shift + i) % len(_PROBES)] for i, s in enumerate(symbols)} for shift in range(len(_PROBES))]


def _finite(value: Any) -> bool:
    return bool(value.is_number) and not value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)


def proportional(a: Any, b: Any) -> Any | None:
    """The constant ``c`` with ``a == c * b`` (both with variables), else None.

    Two equations ``a = 0`` and ``b = 0`` have the same solutions when this exists and is not 0;
    two inequalities ``a > 0`` and ``b > 0`` when it is positive.
    """
    if a.atoms(AppliedUndef) or b.atoms(AppliedUndef):
        try:
            ratio = sympy.simplify(a / b)
        except (TypeError, ValueError, ZeroDivisionError, AttributeError, NotImplementedError):
            return None
        return ratio if is_constant(ratio) and ratio != 0 and ratio.is_finite else None
    ratios = []
    for point in _points(sorted(a.free_symbols | b.free_symbols, key=str)):
        try:
            va, vb = sympy.N(a.subs(point), 40), sympy.N(b.subs(point), 40)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
        if not (_finite(va) and _finite(vb)):
            continue
        if vb == 0 or va == 0:
            if (vb == 0) != (abs(va) <= _TINY):
                return None
            continue  # a probe on the curve itself tells nothing about the ratio
        ratios.append(va / vb)
    if len(ratios) < 3:
        return None
    first = ratios[0]
    if not all(abs(r - first) <= _PROBE_RELATIVE * abs(first) for r in ratios):
        return None
    return first


def rename_candidates(a: Any, b: Any, mode: str, definition: bool = False) -> list[Any]:
    """``b`` with its variables renamed onto ``a``'s, as ``mode`` allows.

    ``bound``: only names that are conventionally bound (``k, n, m, j, l, t`` as in ``k\\pi``)
    and, in a function ``definition``, the function's arguments (``f(z) = z`` is ``f(x) = x``, but
    ``3 - 2f(y)`` is not ``3 - 2f(x)``); ``always``: any variables, matched in every order (up to
    three). ``never``: none.
    """
    if mode == "never":
        return []
    only_a = sorted(a.free_symbols - b.free_symbols, key=str)
    only_b = sorted(b.free_symbols - a.free_symbols, key=str)
    if not only_a or len(only_a) != len(only_b) or len(only_a) > 3:
        return []
    if mode == "bound":
        bound_b = {s for f in b.atoms(AppliedUndef) for s in f.free_symbols if definition} | {
            s for s in only_b if str(s) in _BOUND_NAMES
        }
        bound_a = {s for f in a.atoms(AppliedUndef) for s in f.free_symbols if definition} | {
            s for s in only_a if str(s) in _BOUND_NAMES
        }
        if not (set(only_b) <= bound_b and set(only_a) <= bound_a):
            return []
    return [b.xreplace(dict(zip(only_b, order, strict=True))) for order in itertools.permutations(only_a)]
