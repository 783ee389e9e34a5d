"""`sql`'s inline databases live in the worker's memory, within a byte bound, and nowhere on disk.

A reference's ``schema`` and ``rows`` used to be built into files under a temporary folder that
was removed at interpreter exit, which a pool worker (killed, not exited) never reaches: each
worker left up to 32 databases of 64 MiB in /tmp. These tests pin the replacement: no file, a cache
bounded in databases and in bytes, and a copy per query that cannot be written.
"""

from __future__ import annotations

import gc
import sqlite3
import tempfile
import weakref
from pathlib import Path

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.sql import QueryRefused, SqlVerifier
from rewardhub.verifiers.sql import database as sql_database
from rewardhub.verifiers.sql.database import InlineCache, InlineDatabase, Limits, inline_database, run_query

VERIFIER = SqlVerifier()
LIMITS = Limits(timeout_s=5.0, max_rows=100_000)


def inline_reference(n: int, width: int = 200) -> dict:
    """A database of ``n`` rows with ``width``-character names (distinct per ``n``), and its gold."""
    rows = [[i, f"{n}-{i}-" + "x" * width, i * 0.5] for i in range(n)]
    return {
        "schema": "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL);",
        "rows": {"item": rows},
        "gold_sql": "SELECT count(*), sum(price) FROM item",
    }


def score(reference: dict, query: str = "SELECT count(*), sum(price) FROM item") -> float:
    result = VERIFIER.score(Sample(response=f"```sql\n{query}\n```", reference=reference), SqlVerifier.Config())
    assert result.status == "ok", result
    return result.score


@pytest.fixture
def small_cache(monkeypatch: pytest.MonkeyPatch) -> InlineCache:
    """The module's cache swapped for one that holds three 1,000-row databases' worth of bytes."""
    one = len(inline_database(**_schema_and_rows(inline_reference(1000)), timeout_s=5).image)
    cache = InlineCache(entries=32, max_bytes=3 * one)
    monkeypatch.setattr(sql_database, "_cache", cache)
    return cache


def _schema_and_rows(reference: dict) -> dict:
    return {"schema": reference["schema"], "rows": reference["rows"]}


def test_the_cache_evicts_least_recently_used_first_within_its_byte_bound() -> None:
    cache = InlineCache(entries=100, max_bytes=1000)
    for n in range(20):
        cache.put(InlineDatabase(f"k{n}", b"x" * 300))
        assert cache.nbytes <= 1000
        assert cache.get(f"k{n}") is not None  # the newest is always kept
    assert len(cache) == 3 and cache.nbytes == 900
    assert cache.get("k16") is None and cache.get("k17") is not None


def test_the_cache_keeps_no_more_databases_than_its_count() -> None:
    cache = InlineCache(entries=2, max_bytes=10**9)
    for n in range(5):
        cache.put(InlineDatabase(f"k{n}", b"x"))
    assert len(cache) == 2 and cache.nbytes == 2


def test_scoring_many_inline_databases_stays_within_the_byte_bound(small_cache: InlineCache) -> None:
    for n in range(1000, 1012):  # twelve distinct databases, about 250 kB each
        assert score(inline_reference(n)) == 1.0
        assert small_cache.nbytes <= small_cache.max_bytes
    assert 1 <= len(small_cache) <= 3


def test_an_evicted_database_is_freed_though_its_gold_rows_are_remembered(small_cache: InlineCache) -> None:
    first = inline_database(**_schema_and_rows(inline_reference(1000)), timeout_s=5)
    assert score(inline_reference(1000)) == 1.0  # its gold's rows are now remembered
    alive = weakref.ref(first)
    del first
    for n in range(1001, 1005):
        score(inline_reference(n))
    gc.collect()
    assert alive() is None, "a cache of gold rows keeps an evicted database's image"


def test_inline_databases_write_nothing_to_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for n in range(2000, 2004):
        assert score(inline_reference(n)) == 1.0
        assert score(inline_reference(n), "SELECT name FROM item ORDER BY name DESC") == 0.0
    assert list(tmp_path.iterdir()) == []


def test_a_query_cannot_write_its_copy_of_an_inline_database() -> None:
    database = inline_database(**_schema_and_rows(inline_reference(10)), timeout_s=5)
    with pytest.raises(QueryRefused, match="DELETE"):
        run_query(database, "DELETE FROM item", LIMITS)
    conn = sql_database._connect(database)  # the layer under the authorizer: query_only
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM item")
    finally:
        conn.close()
    assert run_query(database, "SELECT count(*) FROM item", LIMITS) == [(10,)]
