"""Comparing result sets by the benchmarks' own rules.

- **BIRD** (its ``evaluation.py``, and NeMo-Gym's ``bird_sql`` and SkyRL's ``sql`` environment):
  the rows as a set, ``set(predicted) == set(gold)``. Order and duplicates do not count; column
  order does (rows are tuples).
- **Spider** (the test-suite execution match, ``exec_eval.result_eq``): the same rows as a bag
  under some permutation of the columns, in order when the gold query has ``ORDER BY`` (a plain
  ``"order by" in gold.lower()``, as the test suite checks it). Column names do not count.

Values compare as Python compares what SQLite returns: ``1 == 1.0``, no tolerance on floats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["MAX_PERMUTATIONS", "bird_match", "spider_match", "spider_order_matters"]

Row = tuple[Any, ...]

MAX_PERMUTATIONS = 100_000
"""Column permutations Spider's rule may try before the verdict is refused as too costly."""


def bird_match(gold: Sequence[Row], predicted: Sequence[Row]) -> bool:
    """BIRD: the same set of rows."""
    return set(gold) == set(predicted)


def spider_order_matters(gold_sql: str) -> bool:
    """Spider's test suite compares in order when the gold query has ORDER BY."""
    return "order by" in gold_sql.lower()


def spider_match(gold: Sequence[Row], predicted: Sequence[Row], order_matters: bool) -> bool:
    """Spider's test-suite match: the same rows (a bag, or a list when ordered) up to a column permutation."""
    if not gold and not predicted:
        return True
    if len(gold) != len(predicted):
        return False
    width = len(gold[0])
    if len(predicted[0]) != width:
        return False
    if not _same_unordered_rows(gold, predicted, order_matters):
        return False  # necessary for any column permutation: rows equal as unordered tuples
    gold_columns = [{row[i] for row in gold} for i in range(width)]
    for permutation in _permutations(gold_columns, predicted):
        permuted = [tuple(row[i] for i in permutation) for row in predicted]
        if order_matters:
            if list(gold) == permuted:
                return True
        elif Counter(gold) == Counter(permuted):
            return True
    return False


def _same_unordered_rows(gold: Sequence[Row], predicted: Sequence[Row], order_matters: bool) -> bool:
    """The test suite's quick rejection: each row's values sorted (by ``str(x) + str(type(x))``)."""
    first = [_unordered(row) for row in gold]
    second = [_unordered(row) for row in predicted]
    return first == second if order_matters else set(first) == set(second)


def _unordered(row: Row) -> Row:
    return tuple(sorted(row, key=lambda value: str(value) + str(type(value))))


def _permutations(gold_columns: list[set[Any]], predicted: Sequence[Row]) -> Iterator[tuple[int, ...]]:
    """Column permutations that could map ``predicted`` onto the gold, pruned by column values.

    A predicted column can stand for a gold column only if each of its values occurs in that gold
    column (the test suite samples 20 rows for this; every row is used here, which prunes only
    permutations that cannot match, so the verdict is the same).
    """
    width = len(gold_columns)
    candidates = [
        [j for j in range(width) if all(row[j] in gold_columns[i] for row in predicted)] for i in range(width)
    ]
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
