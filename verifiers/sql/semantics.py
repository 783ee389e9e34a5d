"""Scoring by a benchmark's own semantics: ``bird`` (its ``evaluation.py``) and ``spider`` (the test suite).

Where rewardhub's own reading (``semantics: "rewardhub"``, the default) is stricter, these follow
the benchmark, so that a reward is the benchmark's score:

- **No row cap on a comparison.** The gold is read once into digests (:mod:`.compare`), up to
  ``max_gold_rows`` rows (past it: status ``error`` naming that setting), and the predicted rows
  stream past it, so a result of 100,000 rows compares in a few tens of MiB (``verifiers/README.md``
  states the budget; ``tests/verifiers/sql/test_sql_large_results.py`` measures it).
- **Spider's query text** (:mod:`.spider_text`): ``value`` read as ``1`` in the prediction, ``> =``
  joined, ``DISTINCT`` dropped and only the first statement run (unless ``keep_distinct``), ORDER BY
  looked for in the gold's text after that; ``ordered`` in the reference counts only for a
  ``gold_result``, which has no text. Every ``*.sqlite`` file beside a ``db_id``'s database is
  part of its test suite: the prediction must match the gold on each.
- **BIRD's set**: rows as a set, column order counting; ``ordered`` is not read.

What stays rewardhub's under every semantics: only a read-only query runs (a write that a
benchmark would run and score is refused and scores 0), a query past ``query_timeout_s`` scores
0, and a gold that fails is status ``error``, never a 0 (BIRD scores such a sample 0; the test
suite stops on it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rewardhub.errors import VerifierError
from rewardhub.types import Result

from .compare import BirdGold, Counted, SpiderGold, spider_order_matters
from .database import Database, query_rows
from .errors import QueryError, TooManyRows
from .spider_text import spider_gold_text, spider_predicted_text, spider_run_text
from .statement import single_statement

__all__ = ["GOLD_CACHE_ROWS", "benchmark_score"]

Gold = BirdGold | SpiderGold


def benchmark_score(
    semantics: str,
    databases: Sequence[Database],
    gold_sql: str | None,
    gold_result: list[list[Any]] | None,
    ordered: bool | None,
    predicted_sql: str | None,
    config: Any,
) -> Result:
    """The benchmark's verdict on ``predicted_sql``: 1 when it matches the gold on every database.

    The golds are read first, so that a gold that cannot run is an error even when the response
    holds no query.
    """
    spider = semantics == "spider"
    if spider:
        gold_text = spider_gold_text(gold_sql, config.keep_distinct) if gold_sql is not None else None
        order = spider_order_matters(gold_text) if gold_text is not None else bool(ordered)
        predicted_text = spider_run_text(spider_predicted_text(predicted_sql or "", config.keep_distinct))
        gold_text = spider_run_text(gold_text) if gold_text is not None else None
    else:
        gold_text, order, predicted_text = gold_sql, False, predicted_sql or ""
    golds = [_gold(semantics, database, gold_text, gold_result, order, config) for database in databases]
    if predicted_sql is None:
        return Result.ok(0.0, reason="no_sql", error="the response holds no SQL query", semantics=semantics)
    shown = {"semantics": semantics, "predicted_sql": predicted_sql[:2000]}
    if spider:
        shown |= {"ordered": order, "databases": len(databases)}
    read = 0
    for database, gold in zip(databases, golds, strict=True):
        try:
            with query_rows(database, single_statement(predicted_text), config.query_timeout_s) as rows:
                counted = Counted(rows)
                matched = gold.matches(counted)
        except QueryError as exc:
            return Result.ok(0.0, reason=exc.reason, error=exc.message, **shown)
        except ValueError as exc:
            raise VerifierError(f"Spider's rule could not decide: {exc}") from None
        read = max(read, counted.n)
        if not matched:
            return Result.ok(0.0, reason="mismatch", gold_rows=gold.count, predicted_rows_read=counted.n, **shown)
    return Result.ok(1.0, reason="match", gold_rows=golds[0].count, predicted_rows_read=read, **shown)


GOLD_CACHE = 256
GOLD_CACHE_ROWS = 1_000_000
"""Gold results kept per process, together at most this many rows (about 100 bytes each)."""

_golds: OrderedDict[tuple[Any, ...], Gold] = OrderedDict()
_golds_lock = threading.Lock()


def _gold(
    semantics: str,
    database: Database,
    gold_text: str | None,
    gold_result: list[list[Any]] | None,
    order: bool,
    config: Any,
) -> Gold:
    if gold_result is not None:
        return _read_gold(semantics, gold_result, order)
    name = database.key if not isinstance(database, Path) else f"{database}@{database.stat().st_mtime_ns}"
    key = (semantics, name, gold_text, order, config.query_timeout_s, config.max_gold_rows)
    with _golds_lock:
        gold = _golds.get(key)
        if gold is not None:
            _golds.move_to_end(key)
            return gold
    try:
        with query_rows(database, single_statement(gold_text or ""), config.query_timeout_s) as rows:
            gold = _read_gold(semantics, _capped(rows, config.max_gold_rows), order)
    except QueryError as exc:
        raise VerifierError(f"reference.gold_sql could not be run ({exc.reason}): {exc.message}") from None
    with _golds_lock:
        _golds[key] = gold
        while len(_golds) > GOLD_CACHE or sum(g.count for g in _golds.values()) > GOLD_CACHE_ROWS:
            _golds.popitem(last=False)
    return gold


def _read_gold(semantics: str, rows: Iterable[Sequence[Any]], order: bool) -> Gold:
    try:
        return SpiderGold.of(rows, order) if semantics == "spider" else BirdGold.of(rows)
    except ValueError as exc:
        raise VerifierError(f"reference.gold_result: {exc}") from None


def _capped(rows: Iterable[tuple[Any, ...]], max_rows: int) -> Iterator[tuple[Any, ...]]:
    for n, row in enumerate(rows, 1):
        if n > max_rows:
            raise TooManyRows(
                f"the gold returns more than {max_rows} rows: raise max_gold_rows (at most 10000000) to compare it"
            )
        yield row
