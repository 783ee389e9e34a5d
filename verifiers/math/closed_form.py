"""Whether two constants are equal, decided in bounded time: exact algebra on square roots where it
stays small, arbitrary-precision numerics (mpmath, through sympy's ``evalf``) otherwise.

A gold such as ``\\frac{(3-\\sqrt{3})(2-\\sqrt{3})^{2016}+(3+\\sqrt{3})(2+\\sqrt{3})^{2016}}{6}`` is an
integer of 1,153 digits written as a closed form. ``simplify`` would expand the powers; a fixed
80-digit evaluation would call ``(2+\\sqrt{3})^{100}`` equal to ``(2+\\sqrt{3})^{100}+(2-\\sqrt{3})^{100}``
(they differ by 10^-57, a relative 10^-114). So:

1. **Exact** (:func:`surd`): a constant built from rationals, square roots of rationals and ``i`` by
   ``+ - * /`` and integer powers is a vector over Q in the basis ``sqrt(m)``, ``m`` a squarefree
   integer (``-1`` included). The representation is canonical (the square roots of distinct
   squarefree integers are linearly independent over Q), so two such constants are equal exactly
   when their coefficients are. Powers go by repeated squaring. Bounds: radicands up to 10^15
   (they are factored), at most 64 basis terms, at most 2^18 bits (about 79,000 digits) per
   coefficient; past them there is no exact value and the numeric test decides.
2. **Numeric** (:func:`numerically_equal`): both sides are evaluated at ``P`` significant digits,
   ``P = 30 + max(50, s, d)``, where ``s`` is the widest spread (in digits) between the terms of any
   sum in either expression and ``d`` the most digits of any rational literal; they are equal when
   they differ by at most ``10^-(P-30)`` of the largest of their values and their top-level terms.
   A term dropped or changed anywhere in a sum is at least ``10^-s`` of that sum's largest term,
   far above that tolerance, so it is seen. ``P`` is capped at 5,000 digits: past the cap the
   answer is "no verdict" (None), never a guess.

What it does not do: prove identities of transcendental constants (``e^{i\\pi} = -1`` is decided
numerically, to the tolerance above), or handle a constant whose magnitude does not fit mpmath's
exponent range. The screen (``screen``) keeps powers whose exact value would be too large away from
sympy before any of this runs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import sympy

__all__ = ["MAX_DIGITS", "numerically_equal", "surd", "surds_equal"]

Key = frozenset[int]  # the squarefree radicand as its prime factors (-1 for i)
Surd = dict[Key, Fraction]

MAX_RADICAND = 10**15
MAX_TERMS = 64
MAX_BITS = 2**18
MAX_DIGITS = 5_000  # the most significant digits a numeric comparison evaluates at
_GUARD = 30  # digits of evaluation kept below the tolerance
_BASE_DIGITS = 50  # the tolerance with no spread to resolve: 10^-50, relative
_ONE: Key = frozenset()


class _TooBig(Exception):
    """An exact value past the bounds: the numeric test decides instead."""


# -- exact: sums of rational multiples of square roots ---------------------------------------------


def surd(expr: Any) -> Surd | None:
    """``expr`` as ``{radicand primes: coefficient}`` (``2 + 3\\sqrt{6}`` is ``{(): 2, (2, 3): 3}``),
    or None when it is not such a number or would break the bounds."""
    try:
        return _surd(expr)
    except (_TooBig, ZeroDivisionError):
        return None


def surds_equal(a: Any, b: Any) -> bool | None:
    """True or False when both are exact surds (decided exactly), else None."""
    sa, sb = surd(a), surd(b)
    if sa is None or sb is None:
        return None
    return sa == sb


def _surd(expr: Any) -> Surd | None:
    if isinstance(expr, sympy.Rational):
        return _constant(Fraction(int(expr.p), int(expr.q)))
    if expr is sympy.I:
        return {frozenset({-1}): Fraction(1)}
    if isinstance(expr, sympy.Add | sympy.Mul):
        parts = [_surd(arg) for arg in expr.args]
        if any(part is None for part in parts):
            return None
        combine = _add if isinstance(expr, sympy.Add) else _multiply
        value = parts[0]
        for part in parts[1:]:
            value = combine(value, part)  # type: ignore[arg-type]
        return value
    if isinstance(expr, sympy.Pow) and isinstance(expr.exp, sympy.Rational):
        exponent = expr.exp
        if exponent.q == 1:
            base = _surd(expr.base)
            return None if base is None else _power(base, int(exponent.p))
        if exponent.q == 2 and isinstance(expr.base, sympy.Rational):
            root = _root(Fraction(int(expr.base.p), int(expr.base.q)))
            return None if root is None else _power(root, int(exponent.p))
    return None


def _constant(value: Fraction) -> Surd:
    return {_ONE: value} if value else {}


def _root(value: Fraction) -> Surd | None:
    """``sqrt(p/q)`` as ``sqrt(p*q)/q``, the radicand split into a square and a squarefree part."""
    if value == 0:
        return {}
    radicand = abs(value.numerator * value.denominator)
    if radicand > MAX_RADICAND:
        return None
    square, primes = 1, set()
    for prime, power in sympy.factorint(radicand).items():
        square *= prime ** (power // 2)
        if power % 2:
            primes.add(int(prime))
    if value < 0:
        primes.add(-1)
    return {frozenset(primes): Fraction(square, value.denominator)}


def _add(a: Surd, b: Surd) -> Surd:
    total = dict(a)
    for key, coefficient in b.items():
        value = total.get(key, Fraction(0)) + coefficient
        if value:
            total[key] = value
        else:
            total.pop(key, None)
    return total


def _multiply(a: Surd, b: Surd) -> Surd:
    product: Surd = {}
    for ka, ca in a.items():
        for kb, cb in b.items():
            shared = math.prod(ka & kb)  # sqrt(p) * sqrt(p) = p, and i * i = -1
            key = ka ^ kb
            value = product.get(key, Fraction(0)) + ca * cb * shared
            if value:
                product[key] = value
            else:
                product.pop(key, None)
    _check_size(product)
    return product


def _check_size(value: Surd) -> None:
    if len(value) > MAX_TERMS:
        raise _TooBig("too many square roots")
    for coefficient in value.values():
        if max(coefficient.numerator.bit_length(), coefficient.denominator.bit_length()) > MAX_BITS:
            raise _TooBig("coefficients too large")


def _bits(value: Surd) -> int:
    return max(
        (max(c.numerator.bit_length(), c.denominator.bit_length()) + max(map(abs, k), default=1).bit_length())
        for k, c in value.items()
    )


def _power(base: Surd, exponent: int) -> Surd:
    if exponent < 0:
        return _power(_inverse(base), -exponent)
    if exponent == 0:
        return {_ONE: Fraction(1)} if base else {}  # 0^0 is 1 in sympy too
    if not base:
        return {}
    if _bits(base) * exponent > MAX_BITS:
        raise _TooBig("power too large")
    result: Surd = {_ONE: Fraction(1)}
    square = base
    while exponent:
        if exponent & 1:
            result = _multiply(result, square)
        exponent >>= 1
        if exponent:
            square = _multiply(square, square)
    return result


def _inverse(value: Surd) -> Surd:
    """``1/x``: multiplying by the conjugate over each prime in turn (``sqrt(p) -> -sqrt(p)``)
    leaves a rational ``r``, so ``1/x`` is the product of the conjugates divided by ``r``."""
    if not value:
        raise ZeroDivisionError("division by zero")
    numerator: Surd = {_ONE: Fraction(1)}
    for prime in sorted({p for key in value for p in key}):
        conjugate = {key: (-c if prime in key else c) for key, c in value.items()}
        numerator = _multiply(numerator, conjugate)
        value = _multiply(value, conjugate)
    rational = value.get(_ONE)
    if rational is None or len(value) != 1:
        raise ArithmeticError("conjugation left an irrational norm")  # cannot happen: the basis is free
    return {key: c / rational for key, c in numerator.items()}


# -- numeric: a precision that sees every term -----------------------------------------------------


def numerically_equal(a: Any, b: Any) -> bool | None:
    """Whether two constants agree to the tolerance of the module docstring, or None when the
    precision that needs is over :data:`MAX_DIGITS` or they cannot be evaluated to numbers."""
    try:
        digits = _BASE_DIGITS + _GUARD
        for expr in (a, b):
            digits = max(digits, _needed_digits(expr) + _GUARD)
        if digits > MAX_DIGITS:
            return None
        va, vb = sympy.N(a, digits, maxn=2 * digits), sympy.N(b, digits, maxn=2 * digits)
        if not (_finite_number(va) and _finite_number(vb)):
            return bool(va == vb) if va.is_number and vb.is_number and not va.has(sympy.nan, sympy.zoo) else None
        scale = max([abs(va), abs(vb), *_term_sizes(a, digits), *_term_sizes(b, digits)])
        if scale == 0:
            return True
        tolerance = sympy.Float(10, digits) ** (_GUARD - digits)
        return bool(abs(va - vb) <= tolerance * scale)
    except (TypeError, ValueError, ZeroDivisionError, AttributeError, ArithmeticError):
        return None


def _finite_number(value: Any) -> bool:
    return bool(value.is_number) and bool(value.is_finite) and not value.has(sympy.nan, sympy.zoo)


def _needed_digits(expr: Any) -> int:
    """The digits of evaluation that resolve every term of every sum in ``expr`` and every literal."""
    needed = 0
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Rational):
            needed = max(needed, len(str(abs(node.p))) + (len(str(node.q)) if node.q != 1 else 0))
        elif isinstance(node, sympy.Add):
            sizes = [size for size in (_log10_size(arg) for arg in node.args) if size is not None]
            if len(sizes) > 1:
                needed = max(needed, math.ceil(max(sizes) - min(sizes)))
    return needed


def _log10_size(expr: Any) -> float | None:
    value = sympy.N(expr, 15)
    if not value.is_number or value == 0 or not value.is_finite:
        return None
    return float(sympy.log(abs(value), 10).evalf(15))


def _term_sizes(expr: Any, digits: int) -> list[Any]:
    """The magnitudes of a sum's terms: the scale that rounding error at ``digits`` is measured against."""
    if not isinstance(expr, sympy.Add):
        return []
    return [abs(sympy.N(arg, digits, maxn=2 * digits)) for arg in expr.args]
