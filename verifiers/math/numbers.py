"""The fast path: plain numbers read exactly, without sympy.

Most real answers are plain numbers (``42``, ``-0.5``, ``3/4``, ``1,000``, ``2\\frac{1}{2}``,
``1.5 \\times 10^{3}``, ``0.\\overline{3}``). They become :class:`fractions.Fraction` values, exact
and about a hundred times faster than a trip through the LaTeX parser and sympy, remembering how
many decimals were written (a decimal gold states its precision).
"""

from __future__ import annotations

import re
from fractions import Fraction

from .values import Num, Unparseable

__all__ = ["THOUSANDS", "read_number"]

_DECIMAL = re.compile(r"^([-+]?)(\d*)(?:\.(\d*))?$")
THOUSANDS = re.compile(r"^([-+]?\d{1,3}(?:,\d{3})+|[-+]?\d{1,3}(?: \d{3})+)(\.\d+)?$")
_FRACTION = re.compile(r"^([-+]?)\s*(\d+)\s*/\s*(\d+)$")
_LATEX_FRACTION = re.compile(r"^([-+]?)\s*\\frac\{\s*([-+]?)\s*(\d+)\s*\}\{\s*(\d+)\s*\}$")
_MIXED = re.compile(r"^([-+]?)(\d{1,3}(?: \d{3})+|\d+)\s*(?:\\frac\{(\d+)\}\{(\d+)\}|\s(\d+)/(\d+))$")
_SCIENTIFIC = re.compile(
    r"^([-+]?\d+(?:\.\d+)?)\s*(?:\\times|\\cdot|\*)\s*10\^\{?\s*([-+]?\d+)\s*\}?$|^([-+]?\d+(?:\.\d+)?)[eE]([-+]?\d+)$"
)
_REPEATING = re.compile(r"^([-+]?)(\d*)\.(\d*)\\overline\{(\d+)\}$")


def read_number(text: str, percent: bool = False, degrees: bool = False) -> Num | None:
    """Plain numbers as exact fractions, remembering how many decimals were written."""
    text = text.strip()
    thousands = THOUSANDS.match(text)
    if thousands:
        text = thousands.group(1).replace(",", "").replace(" ", "") + (thousands.group(2) or "")
    decimal = _DECIMAL.match(text)
    if decimal and (decimal.group(2) or decimal.group(3)):
        sign, whole, fraction = decimal.groups()
        value = Fraction(int(whole or "0")) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
        places = len(fraction) if fraction else None
        return Num(-value if sign == "-" else value, places, percent, degrees)
    for pattern in (_FRACTION, _LATEX_FRACTION):
        match = pattern.match(text)
        if match:
            groups = match.groups()
            negative = (groups[0] == "-") != (len(groups) == 4 and groups[1] == "-")
            numerator, denominator = int(groups[-2]), int(groups[-1])
            if denominator == 0:
                raise Unparseable("division by zero")
            value = Fraction(numerator, denominator)
            return Num(-value if negative else value, None, percent, degrees)
    mixed = _MIXED.match(text)
    if mixed:
        sign, whole, *rest = mixed.groups()
        numerator, denominator = (rest[0], rest[1]) if rest[0] else (rest[2], rest[3])
        if int(numerator) >= int(denominator):
            raise Unparseable("not a mixed number: the fraction is not proper")  # "11 7/6"
        value = int(whole.replace(" ", "")) + Fraction(int(numerator), int(denominator))
        return Num(-value if sign == "-" else value, None, percent, degrees)
    scientific = _SCIENTIFIC.match(text)
    if scientific:
        mantissa, exponent = (
            (scientific.group(1), scientific.group(2)) if scientific.group(1) else scientific.group(3, 4)
        )
        return Num(Fraction(mantissa) * Fraction(10) ** int(exponent), None, percent, degrees)
    repeating = _REPEATING.match(text)
    if repeating:
        sign, whole, fixed, cycle = repeating.groups()
        value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
        value += Fraction(int(cycle), (10 ** len(cycle) - 1) * 10 ** len(fixed))
        return Num(-value if sign == "-" else value, None, percent, degrees)
    return None
