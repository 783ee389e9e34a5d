"""Is the program's answer the expected one? Decided in the trusted parent, never in the sandbox.

Output comparison follows what judges of the APPS/LiveCodeBench kind accept: trailing whitespace
and trailing blank lines never matter; numbers may differ by ``float_tolerance``. Function results
compare as Python values after tuples become lists (JSON has no tuples); like APPS, an expected
``[x]`` also accepts ``x``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

__all__ = ["OutputMode", "same_output", "same_value"]

OutputMode = Literal["lines", "tokens", "exact"]


def same_output(actual: str, expected: str, mode: OutputMode = "lines", float_tolerance: float = 0.0) -> bool:
    if mode == "exact":
        return actual == expected
    if mode == "tokens":
        return _same_tokens(actual.split(), expected.split(), float_tolerance)
    got, want = _lines(actual), _lines(expected)
    if got == want:
        return True
    return len(got) == len(want) and all(
        _same_tokens(g.split(), w.split(), float_tolerance) for g, w in zip(got, want, strict=True)
    )


def same_value(actual: Any, expected: Any, float_tolerance: float = 0.0) -> bool:
    actual, expected = _listify(actual), _listify(expected)
    if _equal(actual, expected, float_tolerance):
        return True
    return isinstance(expected, list) and len(expected) == 1 and _equal(actual, expected[0], float_tolerance)


def _lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _same_tokens(got: list[str], want: list[str], tolerance: float) -> bool:
    if got == want:
        return True
    if len(got) != len(want) or tolerance <= 0:
        return False
    return all(g == w or _close_numbers(g, w, tolerance) for g, w in zip(got, want, strict=True))


def _close_numbers(got: str, want: str, tolerance: float) -> bool:
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)


def _listify(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_listify(item) for item in value]
    if isinstance(value, dict):
        return {key: _listify(item) for key, item in value.items()}
    return value


def _equal(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if (
            isinstance(a, int | float)
            and isinstance(b, int | float)
            and not isinstance(a, bool)
            and not isinstance(b, bool)
        ):
            return a == b or (tolerance > 0 and math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance))
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k], tolerance) for k in a)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
