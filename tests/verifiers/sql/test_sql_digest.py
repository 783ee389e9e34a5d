"""Row digests stand for rows: two digests are equal exactly when Python's ``==`` says the values are.

Both benchmarks compare what SQLite returns with Python's equality (``1 == 1.0``, ``'1' != b'1'``),
so the digests that large results are compared by must draw the same lines.
"""

from __future__ import annotations

from itertools import product

import pytest

from rewardhub.verifiers.sql import bird_match, spider_match
from rewardhub.verifiers.sql.digest import RowDigester, unordered_digest, value_digest

VALUES = [
    None, 0, 0.0, -0.0, 1, 1.0, True, False, -1, 2.5, 2**53, 2**53 + 1, float(2**53), 2**63 - 1, 1e300,
    float("inf"), float("-inf"), "", "1", "1.0", "a" * 40, "a" * 41, "é", b"", b"1", b"a" * 40, "None",
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), list(product(VALUES, VALUES)))
def test_value_digests_are_equal_exactly_when_the_values_are(a, b) -> None:
    assert (value_digest(a) == value_digest(b)) == (a == b)


def test_a_row_digest_keeps_column_order_and_width() -> None:
    digester = RowDigester()
    assert digester.key((1, "a")) == digester.key((1.0, "a"))
    assert digester.key((1, "a")) != digester.key(("a", 1))
    assert digester.key((1, 2)) != digester.key((1, 2, None))
    assert digester.key(("ab", "c")) != digester.key(("a", "bc"))


def test_the_sorted_row_is_the_test_suites_unorder_row() -> None:
    """``unorder_row`` sorts by ``str(x) + str(type(x))``: ``1`` and ``1.0`` may sort apart."""
    assert unordered_digest((1, "1.5")) != unordered_digest((1.0, "1.5"))
    assert unordered_digest((2, "b", None)) == unordered_digest((None, 2, "b"))
    assert not spider_match([(1, "1.5")], [(1.0, "1.5")], False)  # rejected before any permutation is tried
    assert spider_match([(1, "x")], [(1.0, "x")], False)
    assert bird_match([(1, "1.5")], [(1.0, "1.5")])
