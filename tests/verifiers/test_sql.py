"""`sql`: text-to-SQL by execution on a read-only SQLite database, by BIRD's and Spider's rules.

The databases are built here, shaped like the benchmarks' own: BIRD's ``california_schools``
(a ``frpm`` and a ``schools`` table joined on ``CDSCode``, backquoted column names with spaces)
and Spider's ``concert_singer``, each in the ``<db_id>/<db_id>.sqlite`` layout both benchmarks ship.
BIRD's rule is compared with NeMo-Gym's released ``bird_sql`` evaluation (nemo-gym 0.7.0, which
mirrors BIRD's ``evaluation.py``) on the same files; Spider's test-suite match has no release on a
package registry, so its rule is held to cases worked by hand from its definition.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from rewardhub.audit import load_corpus
from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.sql import (
    DATA_DIR_ENV,
    SqlVerifier,
    bird_match,
    extract_sql,
    single_statement,
    spider_match,
    spider_order_matters,
)
from rewardhub.verifiers.sql.errors import QueryRefused

BIRD_SCHEMA = """
CREATE TABLE frpm (
  CDSCode TEXT NOT NULL PRIMARY KEY,
  `County Name` TEXT,
  `School Name` TEXT,
  `Enrollment (K-12)` REAL,
  `Free Meal Count (K-12)` REAL,
  `Percent (%) Eligible Free (K-12)` REAL
);
CREATE TABLE schools (
  CDSCode TEXT NOT NULL PRIMARY KEY,
  County TEXT,
  City TEXT,
  Charter INTEGER,
  OpenDate DATE,
  FOREIGN KEY (CDSCode) REFERENCES frpm (CDSCode)
);
"""
FRPM = [
    ("01100170109835", "Alameda", "FAME Public Charter", 1087.0, 565.0, 0.5198),
    ("01100170112607", "Alameda", "Envision Academy", 395.0, 186.0, 0.4708),
    ("01100170118489", "Alameda", "Aspire California College", 244.0, 134.0, 0.5492),
    ("19642120000000", "Los Angeles", "Lincoln Elementary", 601.0, 480.0, 0.7987),
    ("19642120111111", "Los Angeles", "Garfield High", 2302.0, 1980.0, 0.8601),
    ("37683380000000", "San Diego", "Ocean View", 488.0, 102.0, 0.2090),
]
SCHOOLS = [
    ("01100170109835", "Alameda", "Hayward", 1, "2005-08-29"),
    ("01100170112607", "Alameda", "Oakland", 1, "2006-08-28"),
    ("01100170118489", "Alameda", "Oakland", 1, "2008-08-21"),
    ("19642120000000", "Los Angeles", "Los Angeles", 0, "1980-09-01"),
    ("19642120111111", "Los Angeles", "Los Angeles", 0, "1925-09-01"),
    ("37683380000000", "San Diego", "San Diego", 0, "1999-09-07"),
]
SPIDER_SCHEMA = """
CREATE TABLE singer (Singer_ID INT PRIMARY KEY, Name TEXT, Country TEXT, Age INT, Is_male TEXT);
CREATE TABLE concert (concert_ID INT PRIMARY KEY, concert_Name TEXT, Stadium_ID INT, Year TEXT);
CREATE TABLE singer_in_concert (concert_ID INT, Singer_ID INT);
"""
SINGERS = [
    (1, "Joe Sharp", "Netherlands", 52, "F"),
    (2, "Timbaland", "United States", 32, "T"),
    (3, "Justin Brown", "France", 29, "T"),
    (4, "Rose White", "France", 41, "F"),
    (5, "John Nizinik", "France", 43, "T"),
    (6, "Tribal King", "France", 25, "T"),
]
CONCERTS = [(1, "Auditions", 1, "2014"), (2, "Super bootcamp", 2, "2014"), (3, "Home Visits", 2, "2015")]
SINGER_IN_CONCERT = [(1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 5), (3, 4)]


def _database(folder: Path, db_id: str, schema: str, tables: dict[str, list[tuple]]) -> Path:
    path = folder / db_id / f"{db_id}.sqlite"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    for table, rows in tables.items():
        conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sql_data")
    _database(root, "california_schools", BIRD_SCHEMA, {"frpm": FRPM, "schools": SCHOOLS})
    _database(
        root,
        "concert_singer",
        SPIDER_SCHEMA,
        {"singer": SINGERS, "concert": CONCERTS, "singer_in_concert": SINGER_IN_CONCERT},
    )
    return root


@pytest.fixture(autouse=True)
def _data_dir_env(data_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir))


def score(response: str, reference: dict, **config):
    return SqlVerifier().score(Sample(response=response, reference=reference), SqlVerifier.Config(**config))


def fenced(sql: str) -> str:
    return f"<think>look at frpm</think>The query:\n```sql\n{sql}\n```"


# BIRD-shaped questions on california_schools: (gold SQL, a predicted query, BIRD's verdict).
BIRD_CASES = [
    (  # the highest eligible free rate in Alameda County: the same value by another road
        "SELECT MAX(`Percent (%) Eligible Free (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'",
        "SELECT `Percent (%) Eligible Free (K-12)` FROM frpm WHERE `County Name` = 'Alameda' "
        "ORDER BY `Percent (%) Eligible Free (K-12)` DESC LIMIT 1",
        True,
    ),
    (  # set semantics: duplicates and order do not count
        "SELECT City FROM schools WHERE Charter = 1",
        "SELECT DISTINCT City FROM schools WHERE Charter = 1 ORDER BY City DESC",
        True,
    ),
    (  # a join against a subquery: the same schools
        "SELECT T1.`School Name` FROM frpm AS T1 INNER JOIN schools AS T2 ON T1.CDSCode = T2.CDSCode "
        "WHERE T2.City = 'Oakland'",
        "SELECT `School Name` FROM frpm WHERE CDSCode IN (SELECT CDSCode FROM schools WHERE City = 'Oakland')",
        True,
    ),
    (  # column order counts under BIRD's rule (rows are tuples)
        "SELECT `School Name`, `Enrollment (K-12)` FROM frpm WHERE `County Name` = 'San Diego'",
        "SELECT `Enrollment (K-12)`, `School Name` FROM frpm WHERE `County Name` = 'San Diego'",
        False,
    ),
    (  # the wrong county
        "SELECT COUNT(*) FROM frpm WHERE `County Name` = 'Alameda'",
        "SELECT COUNT(*) FROM frpm WHERE `County Name` = 'Los Angeles'",
        False,
    ),
    (  # 3 == 3.0 in a set of Python values
        "SELECT COUNT(*) FROM schools WHERE Charter = 1",
        "SELECT SUM(Charter) * 1.0 FROM schools",
        True,
    ),
    (  # a ratio computed with integer division: BIRD's classic trap
        "SELECT CAST(SUM(Charter) AS REAL) / COUNT(*) FROM schools",
        "SELECT SUM(Charter) / COUNT(*) FROM schools",
        False,
    ),
    (  # an extra column is a different row
        "SELECT `School Name` FROM frpm WHERE `Free Meal Count (K-12)` > 1000",
        "SELECT `School Name`, `Free Meal Count (K-12)` FROM frpm WHERE `Free Meal Count (K-12)` > 1000",
        False,
    ),
    (  # both empty
        "SELECT City FROM schools WHERE OpenDate > '2020-01-01'",
        "SELECT City FROM schools WHERE Charter = 2",
        True,
    ),
    (  # a syntax error is a wrong answer
        "SELECT COUNT(*) FROM schools",
        "SELEC COUNT(*) FROM schools",
        False,
    ),
    (  # a missing column is a wrong answer
        "SELECT COUNT(*) FROM schools",
        "SELECT COUNT(Zip) FROM schools",
        False,
    ),
]


@pytest.mark.parametrize(("gold", "predicted", "verdict"), BIRD_CASES)
def test_bird_rule_on_bird_shaped_questions(gold: str, predicted: str, verdict: bool) -> None:
    result = score(fenced(predicted), {"db_id": "california_schools", "SQL": gold, "question": "...", "evidence": ""})
    assert result.status == "ok"
    assert result.score == (1.0 if verdict else 0.0), result.details


def test_bird_rule_agrees_with_nemo_gyms_released_bird_sql(data_dir: Path, capsys) -> None:
    eval_utils = pytest.importorskip("resources_servers.bird_sql.eval_utils")
    db = data_dir / "california_schools" / "california_schools.sqlite"
    agree = 0
    for gold, predicted, _ in BIRD_CASES:
        gold_rows = eval_utils.execute_sqlite(db, gold)
        predicted_rows = eval_utils.execute_sqlite(db, predicted)
        theirs = predicted_rows is not None and eval_utils.result_sets_match(gold_rows, predicted_rows)
        ours = score(fenced(predicted), {"db_id": "california_schools", "gt_sql": gold}, answer_format="sql_block")
        agree += (ours.score == 1.0) == theirs
    with capsys.disabled():
        print(f"\nsql (bird rule) vs NeMo-Gym bird_sql 0.7.0: {agree}/{len(BIRD_CASES)} verdicts agree")
    assert agree == len(BIRD_CASES)


# Spider's test-suite execution match, worked by hand: (gold rows, predicted rows, ordered, verdict).
SPIDER_RULE = [
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], False, True),  # rows in any order
    ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], True, False),  # ORDER BY in the gold: in order
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], True, True),  # columns in any order
    ([(1, "a"), (1, "a"), (2, "b")], [(1, "a"), (2, "b"), (2, "b")], False, False),  # a bag, not a set
    ([(1, "a"), (2, "b")], [(1, "a"), (2, "b"), (2, "b")], False, False),  # a duplicate row is a difference
    ([(1, 2), (2, 1)], [(2, 1), (1, 2)], False, True),  # swapping the columns maps each row on another
    ([(1, 2, 3)], [(3, 1, 2)], True, True),
    ([(1, 2)], [(1, 2, 3)], False, False),  # a column more
    ([], [], True, True),
    ([(1,)], [], False, False),
    ([(1, "x"), (2, "y")], [(1, "y"), (2, "x")], False, False),  # values in the right columns, wrong rows
]


@pytest.mark.parametrize(("gold", "predicted", "ordered", "verdict"), SPIDER_RULE)
def test_spider_rule_by_hand(gold, predicted, ordered, verdict) -> None:
    assert spider_match(gold, predicted, ordered) is verdict


def test_spider_orders_when_the_gold_has_order_by() -> None:
    assert spider_order_matters("SELECT name FROM singer ORDER BY age DESC")
    assert spider_order_matters("select name from singer order by age")
    assert not spider_order_matters("SELECT name FROM singer")


def test_bird_rule_is_set_equality() -> None:
    assert bird_match([(1, "a"), (1, "a")], [(1, "a")])
    assert not bird_match([(1, "a")], [("a", 1)])


SPIDER = {"db_id": "concert_singer"}


@pytest.mark.parametrize(
    ("gold", "predicted", "bird", "spider"),
    [
        (  # ORDER BY in the gold: Spider compares in order, BIRD as sets
            "SELECT Name, Age FROM singer WHERE Country = 'France' ORDER BY Age DESC",
            "SELECT Name, Age FROM singer WHERE Country = 'France' ORDER BY Age",
            1.0,
            0.0,
        ),
        (  # Spider forgives a column permutation, BIRD does not
            "SELECT Name, Country FROM singer WHERE Age > 40",
            "SELECT Country, Name FROM singer WHERE Age > 40",
            0.0,
            1.0,
        ),
        (  # Spider counts duplicates, BIRD does not
            "SELECT T2.Name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.Singer_ID = T2.Singer_ID",
            "SELECT DISTINCT T2.Name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.Singer_ID = T2.Singer_ID",
            1.0,
            0.0,
        ),
        (
            "SELECT count(*) FROM concert WHERE Year = '2014'",
            "SELECT count(concert_ID) FROM concert WHERE Year = 2014",  # TEXT affinity: '2014' = 2014
            1.0,
            1.0,
        ),
    ],
)
def test_spider_shaped_questions_under_both_rules(gold: str, predicted: str, bird: float, spider: float) -> None:
    reference = {**SPIDER, "query": gold}
    assert score(fenced(predicted), reference).score == bird
    assert score(fenced(predicted), reference, rule="spider").score == spider


def test_a_gold_result_instead_of_a_gold_query() -> None:
    reference = {**SPIDER, "gold_result": [["Rose White", 41], ["John Nizinik", 43]]}
    query = "SELECT Name, Age FROM singer WHERE Country = 'France' AND Age > 40 ORDER BY Age DESC"
    assert score(fenced(query), reference).score == 1.0
    assert score(fenced(query), reference, rule="spider").score == 1.0
    assert score(fenced(query), {**reference, "ordered": True}, rule="spider").score == 0.0


INLINE = {
    "schema": "CREATE TABLE employee (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary REAL);",
    "rows": {"employee": [[1, "Ada", "eng", 120.0], [2, "Bob", "eng", 95.5], [3, "Cy", "ops", 70.0]]},
    "gold_sql": "SELECT dept, AVG(salary) FROM employee GROUP BY dept",
}


def test_an_inline_schema_and_rows() -> None:
    assert score(fenced("SELECT dept, avg(salary) FROM employee GROUP BY 1"), INLINE).score == 1.0
    assert score(fenced("SELECT dept, max(salary) FROM employee GROUP BY dept"), INLINE).score == 0.0


@pytest.mark.parametrize(
    ("response", "answer_format", "query"),
    [
        ("```sql\nSELECT 1\n```\nor\n```SQL\nSELECT 2\n```", "sql_block", "SELECT 2"),  # the last block
        ("```sql\n**Final query**\nSELECT 3\n```", "sql_block", "SELECT 3"),  # NeMo-Gym drops a bold header
        ("```sqlite\nSELECT 1\n```", "sql_block", None),  # ```sqlite is not a sql fence
        ("SELECT 1", "sql_block", None),
        ("```\nSELECT 4\n```", "auto", "SELECT 4"),
        ("<think>SELECT 0</think><solution>SELECT 5</solution>", "auto", "SELECT 5"),
        ("SELECT 6;", "auto", "SELECT 6;"),
        ("```sql\nSELECT 7\n```", "raw", "```sql\nSELECT 7\n```"),
    ],
)
def test_reading_the_query(response: str, answer_format: str, query: str | None) -> None:
    text = response.split("</think>")[-1]
    assert extract_sql(text, answer_format) == query


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("SELECT 1; DROP TABLE singer", "multiple statements"),
        ("SELECT 1;\nSELECT 2", "multiple statements"),
        ("DROP TABLE singer", "DROP is refused"),
        ("DELETE FROM singer", "DELETE is refused"),
        ("ATTACH DATABASE '/tmp/x.sqlite' AS x", "ATTACH is refused"),
        ("VACUUM INTO '/tmp/copy.sqlite'", "VACUUM is refused"),
        ("-- only a comment ;", "empty"),
    ],
)
def test_statements_refused_before_they_run(sql: str, refused: str) -> None:
    with pytest.raises(QueryRefused, match=refused):
        single_statement(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'a;b' AS x;",  # a semicolon inside a string literal
        "SELECT 1 -- trailing; comment",
        'SELECT "weird;name" FROM singer /* ; */ ;  ',
        "WITH t AS (SELECT 1) SELECT * FROM t",
    ],
)
def test_one_statement_with_semicolons_in_literals_and_comments(sql: str) -> None:
    assert single_statement(sql).upper().startswith(("SELECT", "WITH"))


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("WITH doomed AS (SELECT 1) DELETE FROM singer", "DELETE singer is refused"),
        ("WITH t AS (SELECT 1) INSERT INTO singer SELECT * FROM singer", "INSERT singer is refused"),
        ("SELECT load_extension('/tmp/evil.so')", "load_extension() is refused"),
        ("PRAGMA user_version = 7", "PRAGMA user_version = 7 is refused"),
        ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = DELETE is refused"),
        ("PRAGMA writable_schema", "PRAGMA writable_schema is refused"),
        ("SELECT 1; ATTACH '/tmp/x.sqlite' AS x", "multiple statements"),
    ],
)
def test_writes_and_escapes_are_refused_with_a_reason(data_dir: Path, query: str, why: str) -> None:
    db = data_dir / "concert_singer" / "concert_singer.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    result = score(fenced(query), {**SPIDER, "query": "SELECT count(*) FROM singer"})
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, "refused")
    assert why in result.details["error"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not Path("/tmp/x.sqlite").exists()


def test_a_read_only_pragma_runs() -> None:
    result = score(fenced("PRAGMA table_info(singer)"), {**SPIDER, "gold_result": [[0]]})
    assert result.details["reason"] == "mismatch" and result.details["predicted_rows"] == 5


def test_a_query_past_its_time_limit_is_interrupted() -> None:
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    result = score(fenced(endless), {**SPIDER, "query": "SELECT 1"}, query_timeout_s=0.2)
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, "query_timeout")


def test_a_query_past_the_row_cap_scores_zero() -> None:
    many = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 500) SELECT x FROM n"
    result = score(fenced(many), {**SPIDER, "query": "SELECT 1"}, max_rows=100)
    assert (result.score, result.details["reason"]) == (0.0, "row_cap")


def test_no_query_in_the_response_scores_zero() -> None:
    result = score("I cannot answer this.", {**SPIDER, "query": "SELECT 1"}, answer_format="sql_block")
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, "no_sql")


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ({"db_id": "concert_singer"}, "gold_sql"),
        ({"query": "SELECT 1"}, "name one database"),
        ({"db_id": "no_such_db", "query": "SELECT 1"}, "reference.db_id"),
        ({"db_id": "../concert_singer", "query": "SELECT 1"}, "reference.db_id"),
        ({"db_path": "../../etc/passwd", "query": "SELECT 1"}, "leaves the data directory"),
        ({"db_path": "/etc/passwd", "query": "SELECT 1"}, "absolute"),
        ({"db_id": "concert_singer", "query": "SELECT nope FROM singer"}, "reference.gold_sql"),
        ({"db_id": "concert_singer", "query": "DELETE FROM singer"}, "reference.gold_sql"),
        ({"schema": "ATTACH '/tmp/y.sqlite' AS y;", "gold_sql": "SELECT 1"}, "reference.schema"),
        ({"schema": "CREATE TABLE t(a);", "rows": {"t": [[1, 2]]}, "gold_sql": "SELECT 1"}, "reference.schema"),
        ("SELECT 1", "reference as an object"),
    ],
)
def test_a_bad_reference_is_an_error_naming_the_field(reference, field: str) -> None:
    with pytest.raises(VerifierError, match=field):
        score(fenced("SELECT 1"), reference)
    assert not Path("/tmp/y.sqlite").exists()


def test_a_link_out_of_the_data_directory_is_refused(data_dir: Path, tmp_path: Path) -> None:
    outside = _database(tmp_path, "secret", "CREATE TABLE s(x);", {"s": [(1,)]})
    link = data_dir / "linked.sqlite"
    link.symlink_to(outside)
    try:
        with pytest.raises(VerifierError, match="leaves the data directory"):
            score(fenced("SELECT x FROM s"), {"db_path": "linked.sqlite", "gold_result": [[1]]})
    finally:
        link.unlink()


def test_without_a_data_directory_a_named_database_is_an_error(monkeypatch) -> None:
    monkeypatch.delenv(DATA_DIR_ENV)
    with pytest.raises(VerifierError, match=DATA_DIR_ENV):
        score(fenced("SELECT 1"), {**SPIDER, "query": "SELECT 1"})


def test_no_exploit_of_the_sql_corpus_is_paid() -> None:
    exploits = load_corpus("sql")
    results = {e.id: score(e.response, e.reference) for e in exploits}
    assert {i: r.details for i, r in results.items() if r.status != "ok" or r.score > 0} == {}
    assert not Path("/tmp/rewardhub-exploit.sqlite").exists()
    assert not Path("/tmp/rewardhub-exploit-copy.sqlite").exists()


def test_over_http_a_query_scores_a_write_is_refused_and_a_bad_reference_names_its_field(http) -> None:
    samples = [
        {"response": fenced("SELECT dept, avg(salary) FROM employee GROUP BY dept"), "reference": INLINE},
        {"response": fenced("DELETE FROM employee"), "reference": INLINE},
        {"response": fenced("SELECT 1"), "reference": {"schema": INLINE["schema"]}},
    ]
    reply = http.post("/v1/score", json={"verifier": "sql", "samples": samples})
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert [(r["status"], r["score"]) for r in results] == [("ok", 1.0), ("ok", 0.0), ("error", 0.0)]
    assert results[1]["details"]["reason"] == "refused"
    assert "gold_sql" in results[2]["error"]
    audit = http.post("/v1/audit", json={"verifier": "sql"}).json()["exploits"]
    assert audit["tried"] == len(load_corpus("sql"))
    assert [e["id"] for e in audit["cases"] if e["rewarded"]] == []
