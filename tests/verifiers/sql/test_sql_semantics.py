"""`sql`'s ``semantics``: rewardhub's own reading (the default), BIRD's and Spider's, named in ``details``.

``bird`` is BIRD's ``evaluation.py``: the same set of rows. ``spider`` is the test suite's
execution match, with what it does to a query's text first (``value`` read as ``1``, ``> =``
joined, ``DISTINCT`` dropped and the first statement kept) and every database of its test suite.
The differential test (``test_sql_differential.py``) holds both to the official scripts on a
corpus; these tests pin each rule by itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.sql import DATA_DIR_ENV, SqlVerifier, spider_gold_text, spider_predicted_text

SCHEMA = """
CREATE TABLE singer (singer_id INT PRIMARY KEY, name TEXT, country TEXT, age INT);
CREATE TABLE performs (concert_id INT, singer_id INT);
"""
SINGERS = [(1, "Joe", "Netherlands", 52), (2, "Tim", "France", 32), (3, "Rose", "France", 41), (4, "Ana", "France", 45)]
PERFORMS = [(1, 2), (1, 3), (2, 3), (2, 4)]
OTHER_SINGERS = [(1, "Joe", "Netherlands", 52), (2, "Tim", "France", 47), (5, "Mia", "France", 44)]


def _database(path: Path, singers: list[tuple]) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)", singers)
    conn.executemany("INSERT INTO performs VALUES (?, ?)", PERFORMS)
    conn.commit()
    conn.close()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sql_semantics")
    for db in ("music", "suite"):
        (root / db).mkdir()
        _database(root / db / f"{db}.sqlite", SINGERS)
    _database(root / "suite" / "suite_2.sqlite", OTHER_SINGERS)  # the test suite's second database
    return root


@pytest.fixture(autouse=True)
def _data_dir_env(data_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir))


def score(predicted: str | None, gold: str, db: str = "music", **config):
    response = f"```sql\n{predicted}\n```" if predicted is not None else "no query here"
    reference = {"db_id": db, "query": gold}
    if predicted is None:
        config["answer_format"] = "sql_block"  # the text is no query, and is not read as one
    return SqlVerifier().score(Sample(response=response, reference=reference), SqlVerifier.Config(**config))


def verdicts(predicted: str, gold: str, db: str = "music") -> dict[str, float]:
    return {s: score(predicted, gold, db, semantics=s).score for s in ("rewardhub", "bird", "spider")}


def test_details_name_the_semantics_and_rewardhub_is_the_default() -> None:
    assert SqlVerifier.Config().semantics == "rewardhub"
    for semantics in ("rewardhub", "bird", "spider"):
        result = score("SELECT name FROM singer", "SELECT name FROM singer", semantics=semantics)
        assert (result.score, result.details["semantics"]) == (1.0, semantics)


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (  # duplicates: a set under BIRD's rule and rewardhub's default, DISTINCT dropped under Spider's
            "SELECT DISTINCT T2.name FROM performs AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id",
            "SELECT T2.name FROM performs AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id",
            {"rewardhub": 1.0, "bird": 1.0, "spider": 1.0},
        ),
        (  # count(DISTINCT x) is count(x) to the test suite
            "SELECT count(DISTINCT singer_id) FROM performs",
            "SELECT count(singer_id) FROM performs",
            {"rewardhub": 0.0, "bird": 0.0, "spider": 1.0},
        ),
        (  # a duplicate row the gold lacks: a different bag, the same set
            "SELECT name FROM singer WHERE age > 40 UNION ALL SELECT 'Rose'",
            "SELECT name FROM singer WHERE age > 40",
            {"rewardhub": 1.0, "bird": 1.0, "spider": 0.0},
        ),
        (  # columns swapped: the same rows to Spider, other tuples to BIRD
            "SELECT age, name FROM singer",
            "SELECT name, age FROM singer",
            {"rewardhub": 0.0, "bird": 0.0, "spider": 1.0},
        ),
        (  # ORDER BY in the gold: Spider compares in order
            "SELECT name FROM singer ORDER BY age",
            "SELECT name FROM singer ORDER BY age DESC",
            {"rewardhub": 1.0, "bird": 1.0, "spider": 0.0},
        ),
        (  # '> =' is joined by the test suite; SQLite alone cannot read it
            "SELECT name FROM singer WHERE age > = 45",
            "SELECT name FROM singer WHERE age >= 45",
            {"rewardhub": 0.0, "bird": 0.0, "spider": 1.0},
        ),
        (  # several statements: the test suite runs the first; rewardhub and BIRD refuse them all
            "SELECT name FROM singer WHERE age >= 45; SELECT name FROM singer",
            "SELECT name FROM singer WHERE age >= 45",
            {"rewardhub": 0.0, "bird": 0.0, "spider": 1.0},
        ),
        (  # the prediction's 'value' reads as 1 in the test suite
            "SELECT name FROM singer WHERE singer_id = value",
            "SELECT name FROM singer WHERE singer_id = 1",
            {"rewardhub": 0.0, "bird": 0.0, "spider": 1.0},
        ),
    ],
)
def test_each_semantics_scores_as_its_benchmark(predicted: str, gold: str, expected: dict) -> None:
    assert verdicts(predicted, gold) == expected


def test_spiders_test_suite_runs_the_query_on_every_database_beside_the_gold_s() -> None:
    lucky = "SELECT name FROM singer WHERE singer_id IN (3, 4)"  # right on suite.sqlite, wrong on suite_2.sqlite
    gold = "SELECT name FROM singer WHERE country = 'France' AND age > 40"
    result = score(lucky, gold, db="suite", semantics="spider")
    assert (result.score, result.details["databases"]) == (0.0, 2)
    assert score(lucky, gold, db="music", semantics="spider").score == 1.0  # one database: luck passes
    right = "SELECT name FROM singer WHERE age > 40 AND country = 'France'"
    assert score(right, gold, db="suite", semantics="spider").score == 1.0


def test_a_gold_result_holds_for_its_own_database_only() -> None:
    reference = {"db_id": "suite", "gold_result": [["Rose"], ["Ana"]]}
    query = "```sql\nSELECT name FROM singer WHERE country = 'France' AND age > 40\n```"
    result = SqlVerifier().score(Sample(response=query, reference=reference), SqlVerifier.Config(semantics="spider"))
    assert (result.score, result.details["databases"]) == (1.0, 1)


def test_keep_distinct_runs_the_text_as_written() -> None:
    predicted = "SELECT count(DISTINCT singer_id) FROM performs"
    assert score(predicted, "SELECT count(singer_id) FROM performs", semantics="spider", keep_distinct=True).score == 0
    two = score("SELECT 1; SELECT 2", "SELECT 1", semantics="spider", keep_distinct=True)
    assert (two.score, two.details["reason"]) == (0.0, "refused")


@pytest.mark.parametrize(
    ("text", "predicted", "gold"),
    [
        (
            "SELECT a FROM t WHERE b > = 1 AND c < = 2 AND d ! = 3",
            "SELECT a FROM t WHERE b >= 1 AND c <= 2 AND d != 3",
            None,
        ),
        ("SELECT DISTINCT a, count(distinct b) FROM t", "SELECT  a, count( b) FROM t", None),
        ("SELECT 'distinct', \"distinct\", [distinct] FROM t -- distinct", None, None),  # literals, names, comments
        ("SELECT a_distinct, distinct_b FROM t", None, None),  # part of a name
        ("SELECT 'a;b' FROM t; SELECT 2", "SELECT 'a;b' FROM t;", None),  # the first statement, with its ';'
        (
            "SELECT value FROM t WHERE x = 'value'",
            "SELECT 1 FROM t WHERE x = '1'",
            "SELECT value FROM t WHERE x = 'value'",
        ),
    ],
)
def test_spiders_query_text(text: str, predicted: str | None, gold: str | None) -> None:
    assert spider_predicted_text(text) == (predicted if predicted is not None else text)
    if gold is not None:
        assert spider_gold_text(text) == gold


def test_bird_reads_no_order_and_spider_reads_it_only_for_a_gold_result() -> None:
    reference = {"db_id": "music", "gold_result": [["Ana"], ["Rose"]], "ordered": True}
    query = "```sql\nSELECT name FROM singer WHERE age > 40 AND country = 'France' ORDER BY age\n```"

    def run(**config) -> float:
        return SqlVerifier().score(Sample(response=query, reference=reference), SqlVerifier.Config(**config)).score

    assert (run(semantics="bird"), run(semantics="spider"), run()) == (1.0, 0.0, 0.0)


def test_a_gold_that_fails_is_an_error_under_every_semantics_even_without_a_query() -> None:
    for semantics in ("rewardhub", "bird", "spider"):
        with pytest.raises(VerifierError, match="reference.gold_sql"):
            score(None, "SELECT nothing FROM nowhere", semantics=semantics)
    result = score(None, "SELECT name FROM singer", semantics="bird")
    assert (result.score, result.details["reason"], result.details["semantics"]) == (0.0, "no_sql", "bird")


def test_writes_stay_refused_under_the_benchmarks_semantics(data_dir: Path) -> None:
    before = (data_dir / "music" / "music.sqlite").read_bytes()
    for semantics in ("bird", "spider"):
        result = score("DELETE FROM singer", "SELECT name FROM singer WHERE age > 99", semantics=semantics)
        assert (result.score, result.details["reason"]) == (0.0, "refused")
    assert (data_dir / "music" / "music.sqlite").read_bytes() == before


@pytest.mark.parametrize(
    "config",
    [
        {"semantics": "bird", "rule": "spider"},
        {"semantics": "spider", "max_rows": 5},
        {"semantics": "bird", "keep_distinct": True},
        {"keep_distinct": True},
    ],
)
def test_a_setting_of_another_semantics_is_refused(config: dict) -> None:
    with pytest.raises(ValidationError, match="appl(y|ies) to semantics"):
        SqlVerifier.Config(**config)


def test_the_public_names_of_the_sql_package() -> None:
    import rewardhub.verifiers.sql as sql

    assert sql.__all__ == [
        "DATA_DIR_ENV",
        "BirdGold",
        "Limits",
        "QueryError",
        "QueryFailed",
        "QueryRefused",
        "QueryTimedOut",
        "SqlReference",
        "SpiderGold",
        "SqlVerifier",
        "TooManyRows",
        "bird_match",
        "extract_sql",
        "query_rows",
        "run_query",
        "single_statement",
        "spider_gold_text",
        "spider_match",
        "spider_order_matters",
        "spider_predicted_text",
    ]
    assert all(hasattr(sql, name) for name in sql.__all__)
