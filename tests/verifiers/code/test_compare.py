"""Output and value comparison, decided in the parent."""

from __future__ import annotations

import pytest

from rewardhub.verifiers.code.compare import same_output, same_value


@pytest.mark.parametrize(
    ("actual", "expected", "mode", "tolerance", "same"),
    [
        ("1 2\n3\n", "1 2\n3", "lines", 0.0, True),
        ("1 2  \n3\n\n\n", "1 2\n3\n", "lines", 0.0, True),
        ("1  2\n3\n", "1 2\n3\n", "lines", 0.0, True),
        ("1 2\n3\n", "1 2 3\n", "lines", 0.0, False),
        ("1 2\n3\n", "1 2 3\n", "tokens", 0.0, True),
        ("0.3333333\n", "0.33333333\n", "lines", 1e-6, True),
        ("0.3333333\n", "0.33333333\n", "lines", 0.0, False),
        ("nan\n", "nan\n", "lines", 1e-6, True),
        ("a\n", "a", "exact", 0.0, False),
        ("", "0\n", "lines", 0.0, False),
    ],
)
def test_output_table(actual, expected, mode, tolerance, same):
    assert same_output(actual, expected, mode, tolerance) is same


@pytest.mark.parametrize(
    ("actual", "expected", "same"),
    [
        ((1, 2), [1, 2], True),
        (5, [5], True),
        ([5], [5], True),
        (5, [5, 6], False),
        (0.1 + 0.2, 0.3, True),
        ("1", 1, False),
        ({"a": (1,)}, {"a": [1]}, True),
        (None, [None], True),
    ],
)
def test_value_table(actual, expected, same):
    assert same_value(actual, expected, float_tolerance=1e-9) is same
