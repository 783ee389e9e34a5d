"""Comparing result sets by the benchmarks' own rules, one row at a time.

- **BIRD** (its ``evaluation.py``, and NeMo-Gym's ``bird_sql`` and SkyRL's ``sql`` environment):
  the rows as a set, ``set(predicted) == set(gold)``. Order and duplicates do not count; column
  order does (rows are tuples).
- **Spider** (the test-suite execution match, ``exec_eval.result_eq``): the same rows as a bag
  under some permutation of the columns, in order when the gold query has ``ORDER BY`` (a plain
  ``"order by" in gold.lower()``, as the test suite checks it), after its quick rejection (each
  row's values sorted by ``str(x) + str(type(x))``: the same set of those, or the same list when
  ordered). Column names do not count.

Values compare as Python compares what SQLite returns: ``1 == 1.0``, no tolerance on floats.

Why digests (:mod:`.digest`): the gold is read once into a :class:`BirdGold` or
:class:`SpiderGold`, and the predicted rows stream past it, so neither result is held as a list of
tuples. BIRD keeps the gold's distinct row digests and the predicted ones seen so far (a subset of
the gold's); Spider keeps a few sums, the gold's set of sorted-row digests (unordered gold only),
and 16 bytes per predicted value to try column permutations on. A predicted result longer than
the gold stops at the gold's length plus one row (Spider: a different bag), or at its first row
that is not a gold row (BIRD).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .digest import DIGEST_BYTES, RowDigester, bag_add, row_digest, sequence_add

__all__ = [
    "MAX_PERMUTATIONS",
    "BirdGold",
    "Counted",
    "SpiderGold",
    "bird_match",
    "spider_match",
    "spider_order_matters",
]

Row = Sequence[Any]

MAX_PERMUTATIONS = 100_000
"""Column permutations Spider's rule may try before the verdict is refused as too costly."""


def bird_match(gold: Iterable[Row], predicted: Iterable[Row]) -> bool:
    """BIRD: the same set of rows."""
    return BirdGold.of(gold).matches(predicted)


def spider_order_matters(gold_sql: str) -> bool:
    """Spider's test suite compares in order when the gold query has ORDER BY."""
    return "order by" in gold_sql.lower()


def spider_match(gold: Iterable[Row], predicted: Iterable[Row], order_matters: bool) -> bool:
    """Spider's test-suite match: the same rows (a bag, or a list when ordered) up to a column permutation."""
    return SpiderGold.of(gold, order_matters).matches(predicted)


def _row_keys(rows: Iterable[Row]) -> Iterator[bytes]:
    digester = RowDigester()
    for row in rows:
        yield digester.key(row)


@dataclass(frozen=True)
class BirdGold:
    """The gold's distinct rows, as digests."""

    rows: frozenset[bytes]
    count: int

    @classmethod
    def of(cls, rows: Iterable[Row]) -> BirdGold:
        counted = Counted(rows)
        return cls(frozenset(_row_keys(counted)), counted.n)

    def matches(self, predicted: Iterable[Row]) -> bool:
        seen: set[bytes] = set()
        for key in _row_keys(predicted):
            if key not in self.rows:
                return False
            seen.add(key)
        return len(seen) == len(self.rows)


@dataclass(frozen=True)
class SpiderGold:
    """What Spider's ``result_eq`` needs of the gold, read in one pass.

    ``rows``: the bag (or, ordered, sequence) sum of its row digests; ``sorted_rows``: its
    sorted-row digests as a set (unordered) or a sequence sum (ordered), for the quick rejection;
    ``columns``: each column's values as a bag (or sequence) sum, which prunes permutations to
    those that map a column onto one holding the same values (a necessary condition, so the
    verdict is the test suite's, which tries every permutation of up to three columns).
    """

    count: int
    width: int
    ordered: bool
    rows: int
    sorted_rows: frozenset[bytes] | int
    columns: tuple[int, ...]

    @classmethod
    def of(cls, rows: Iterable[Row], ordered: bool) -> SpiderGold:
        count, width, total, sorted_total = 0, 0, 0, 0
        sorted_set: set[bytes] = set()
        columns: list[int] = []
        digester = RowDigester()
        for row in rows:
            if count == 0:
                width, columns = len(row), [0] * len(row)
            elif len(row) != width:
                raise ValueError(f"the gold's rows differ in width ({width} and {len(row)} columns)")
            digests, key, sorted_key = digester.digest(row)
            if ordered:
                total = sequence_add(total, key)
                sorted_total = sequence_add(sorted_total, sorted_key)
                columns = [sequence_add(c, d) for c, d in zip(columns, digests, strict=True)]
            else:
                total = bag_add(total, key)
                sorted_set.add(sorted_key)
                columns = [bag_add(c, d) for c, d in zip(columns, digests, strict=True)]
            count += 1
        sorted_rows: frozenset[bytes] | int = sorted_total if ordered else frozenset(sorted_set)
        return cls(count, width, ordered, total, sorted_rows, tuple(columns))

    def matches(self, predicted: Iterable[Row]) -> bool:
        n, width, ordered = 0, self.width, self.ordered
        cells = bytearray()  # the predicted values' digests, row after row
        seen: set[bytes] = set()
        sorted_total = 0
        columns = [0] * width
        digester = RowDigester()
        for row in predicted:
            if n == self.count or len(row) != width:
                return False  # a row more than the gold, or another width: a different bag
            digests, _, sorted_key = digester.digest(row, whole=False)
            if ordered:
                sorted_total = sequence_add(sorted_total, sorted_key)
                columns = [sequence_add(c, d) for c, d in zip(columns, digests, strict=True)]
            else:
                if sorted_key not in self.sorted_rows:  # type: ignore[operator]
                    return False
                seen.add(sorted_key)
                columns = [bag_add(c, d) for c, d in zip(columns, digests, strict=True)]
            cells += b"".join(digests)
            n += 1
        if n != self.count:
            return False
        if n == 0:
            return True  # both empty
        quick = sorted_total == self.sorted_rows if ordered else len(seen) == len(self.sorted_rows)  # type: ignore[arg-type]
        if not quick:
            return False
        candidates = [[j for j in range(width) if columns[j] == self.columns[i]] for i in range(width)]
        return any(self._permuted_total(cells, n, perm) == self.rows for perm in _permutations(candidates))

    def _permuted_total(self, cells: bytearray, n: int, perm: tuple[int, ...]) -> int:
        """The bag (or sequence) sum of the predicted rows read with gold column ``i`` from column ``perm[i]``."""
        view, stride, total = memoryview(cells), self.width * DIGEST_BYTES, 0
        for r in range(n):
            base = r * stride
            key = row_digest(view[base + j * DIGEST_BYTES : base + (j + 1) * DIGEST_BYTES] for j in perm)
            total = sequence_add(total, key) if self.ordered else bag_add(total, key)
        return total


class Counted:
    """Rows, counted as a comparison reads them (it may stop early)."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self._rows = rows
        self.n = 0

    def __iter__(self) -> Iterator[Row]:
        for row in self._rows:
            self.n += 1
            yield row


def _permutations(candidates: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """Column permutations that take gold column ``i`` from one of ``candidates[i]``, each column once."""
    width = len(candidates)
    tried = 0
    chosen: list[int] = []
    used: set[int] = set()

    def extend(i: int) -> Iterator[tuple[int, ...]]:
        nonlocal tried
        if i == width:
            tried += 1
            if tried > MAX_PERMUTATIONS:
                raise ValueError(f"more than {MAX_PERMUTATIONS} column permutations to try")
            yield tuple(chosen)
            return
        for j in candidates[i]:
            if j not in used:
                chosen.append(j)
                used.add(j)
                yield from extend(i + 1)
                used.discard(j)
                chosen.pop()

    yield from extend(0)
