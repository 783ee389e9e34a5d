"""The corpus of the SQL differential test: databases in Spider's and BIRD's layout, and (gold, predicted) pairs.

The pairs cover the space where the benchmarks' scripts and a careful reimplementation part ways:
rewrites (joins and subqueries), ORDER BY in the gold or not, duplicates, DISTINCT (and
``count(DISTINCT x)``), NULLs, column order, float rounding and ``1`` against ``1.0``, several
statements, ``> =`` spacing, the word ``value``, empty results, results of 100,000 rows, rows of
more than three columns, and Spider's test suite (a second database beside the first, where a
query right on one by luck is wrong on the other). Each pair carries its class, so a disagreement
is reported by class.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

DB = "music"
BIG_ROWS = 100_000

SCHEMA = """
CREATE TABLE singer (singer_id INT PRIMARY KEY, name TEXT, country TEXT, age INT, net_worth REAL, value INT);
CREATE TABLE concert (concert_id INT PRIMARY KEY, title TEXT, year TEXT, stadium_id INT);
CREATE TABLE singer_in_concert (concert_id INT, singer_id INT);
CREATE TABLE big (id INTEGER PRIMARY KEY, grp INT, label TEXT, score REAL);
CREATE TABLE wide (a INT, b INT, c TEXT, d REAL, e INT);
"""
SINGERS = [
    (1, "Joe Sharp", "Netherlands", 52, 30.5, 7),
    (2, "Timbaland", "United States", 32, 12.25, 3),
    (3, "Justin Brown", "France", 29, None, 3),
    (4, "Rose White", "France", 41, 8.0, None),
    (5, "John Nizinik", "France", 43, 1.0, 1),
    (6, "Tribal King", "France", 25, 2.5, 2),
    (7, "Ana Lee", None, 41, 2.5, 5),
]
VARIANT_SINGERS = [  # the test suite's second database: the same schema, other rows
    (1, "Joe Sharp", "Netherlands", 52, 30.5, 7),
    (2, "Timbaland", "France", 32, 12.25, 3),
    (3, "Justin Brown", "France", 61, None, 3),
    (8, "Mia Stone", "Spain", 41, 4.0, 4),
]
CONCERTS = [(1, "Auditions", "2014", 1), (2, "Super bootcamp", "2014", 2), (3, "Home Visits", "2015", 2)]
SINGER_IN_CONCERT = [(1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 5), (3, 4), (3, 4)]
WIDE = [(1, 2, "x", 0.5, 1), (2, 1, "y", 1.5, 2), (3, 3, "z", 2.5, 3), (1, 2, "x", 0.5, 1)]


def big_rows(n: int) -> list[tuple]:
    return [(i, i % 7, f"label-{i % 1000}", (i % 100) / 4) for i in range(n)]


def build(root: Path) -> Path:
    """``root/music/music.sqlite`` and, beside it, the test suite's ``music_variant.sqlite``."""
    folder = root / DB
    folder.mkdir(parents=True)
    _write(folder / f"{DB}.sqlite", SINGERS, big_rows(BIG_ROWS))
    _write(folder / f"{DB}_variant.sqlite", VARIANT_SINGERS, big_rows(300))
    return root


def _write(path: Path, singers: list[tuple], big: list[tuple]) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO singer VALUES (?, ?, ?, ?, ?, ?)", singers)
    conn.executemany("INSERT INTO concert VALUES (?, ?, ?, ?)", CONCERTS)
    conn.executemany("INSERT INTO singer_in_concert VALUES (?, ?)", SINGER_IN_CONCERT)
    conn.executemany("INSERT INTO big VALUES (?, ?, ?, ?)", big)
    conn.executemany("INSERT INTO wide VALUES (?, ?, ?, ?, ?)", WIDE)
    conn.commit()
    conn.close()


@dataclass(frozen=True)
class Pair:
    kind: str
    gold: str
    predicted: str
    only: str | None = None  # a gold that only this benchmark runs (Spider joins '> =' in the gold too)


def corpus() -> list[Pair]:
    pairs: list[Pair] = []

    def add(kind: str, gold: str, *predicted: str) -> None:
        pairs.extend(Pair(kind, gold, p) for p in predicted)

    add(
        "rewrite",
        "SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id "
        "WHERE T1.concert_id = 3",
        "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert WHERE concert_id = 3)",
        "SELECT s.name FROM singer s, singer_in_concert c WHERE s.singer_id = c.singer_id AND c.concert_id = 3",
        "SELECT name FROM singer WHERE EXISTS (SELECT 1 FROM singer_in_concert c "
        "WHERE c.singer_id = singer.singer_id AND c.concert_id = 3)",
    )
    add(
        "rewrite",
        "SELECT count(*) FROM singer WHERE age > 40",
        "SELECT count(singer_id) FROM singer WHERE age > 40",
        "SELECT sum(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM singer",
        "SELECT count(*) FROM singer WHERE age >= 40",
        "SELECT count(*) FROM (SELECT * FROM singer WHERE NOT age <= 40)",
    )
    add(
        "rewrite",
        "SELECT max(age) FROM singer WHERE country = 'France'",
        "SELECT age FROM singer WHERE country = 'France' ORDER BY age DESC LIMIT 1",
        "SELECT age FROM singer WHERE country = 'France' ORDER BY age LIMIT 1",
    )
    # ORDER BY in the gold, or in the prediction only
    add(
        "order_by",
        "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age DESC",
        "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age DESC",
        "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age",
        "SELECT name, age FROM singer WHERE country = 'France'",
        "SELECT age, name FROM singer WHERE country = 'France' ORDER BY age DESC",
    )
    add(
        "order_by",
        "SELECT name FROM singer WHERE country = 'France'",
        "SELECT name FROM singer WHERE country = 'France' ORDER BY name",
        "SELECT name FROM singer WHERE country = 'France' ORDER BY name DESC",
    )
    add(
        "order_by",
        "select name from singer order by net_worth",  # NULL first, ties in their stored order
        "SELECT name FROM singer ORDER BY net_worth ASC",
        "SELECT name FROM singer ORDER BY net_worth DESC",
        "SELECT name FROM singer ORDER BY coalesce(net_worth, -1)",
    )
    # duplicates and DISTINCT
    add(
        "duplicates",
        "SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id",
        "SELECT DISTINCT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id",
        "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert)",
        "SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id "
        "UNION ALL SELECT 'Rose White'",
    )
    add(
        "duplicates",
        "SELECT concert_id, singer_id FROM singer_in_concert",
        "SELECT DISTINCT concert_id, singer_id FROM singer_in_concert",
        "SELECT concert_id, singer_id FROM singer_in_concert GROUP BY concert_id, singer_id",
        "SELECT singer_id, concert_id FROM singer_in_concert",
    )
    add(
        "distinct",
        "SELECT DISTINCT country FROM singer",
        "SELECT country FROM singer",
        "SELECT country FROM singer GROUP BY country",
        "SELECT DISTINCT country FROM singer WHERE country IS NOT NULL",
    )
    add(
        "distinct",
        "SELECT count(DISTINCT country) FROM singer",
        "SELECT count(country) FROM singer",
        "SELECT count(*) FROM (SELECT DISTINCT country FROM singer WHERE country IS NOT NULL)",
        "SELECT count(DISTINCT country) FROM singer",
    )
    add(
        "distinct",
        "SELECT count(*) FROM (SELECT DISTINCT age FROM singer)",
        "SELECT count(DISTINCT age) FROM singer",
        "SELECT count(age) FROM singer",
    )
    add(
        "distinct",
        "SELECT DISTINCT T1.concert_id FROM singer_in_concert AS T1 ORDER BY T1.concert_id",
        "SELECT concert_id FROM concert ORDER BY concert_id",
        "SELECT distinct concert_id FROM singer_in_concert ORDER BY concert_id",
        "SELECT concert_id FROM singer_in_concert GROUP BY concert_id ORDER BY concert_id",
    )
    # NULLs
    add(
        "nulls",
        "SELECT name FROM singer WHERE net_worth IS NULL",
        "SELECT name FROM singer WHERE net_worth = NULL",
        "SELECT name FROM singer WHERE coalesce(net_worth, 0) = 0",
        "SELECT name FROM singer WHERE net_worth IS NULL",
    )
    add(
        "nulls",
        "SELECT country, count(*) FROM singer GROUP BY country",
        "SELECT country, count(singer_id) FROM singer GROUP BY country",
        "SELECT country, count(country) FROM singer GROUP BY country",
        "SELECT count(*), country FROM singer GROUP BY country",
    )
    add(
        "nulls",
        "SELECT value FROM singer",  # the gold's own 'value' is left alone; the prediction's is read as 1
        "SELECT value FROM singer",
        'SELECT "value" FROM singer',
        "SELECT [value] FROM singer",
    )
    # column order
    add(
        "column_swap",
        "SELECT name, country FROM singer WHERE age > 40",
        "SELECT country, name FROM singer WHERE age > 40",
        "SELECT name, country FROM singer WHERE age > 40",
        "SELECT name, country, age FROM singer WHERE age > 40",
    )
    add(
        "column_swap",
        "SELECT singer_id, value FROM singer WHERE singer_id < 4",  # columns with shared values
        "SELECT singer_id AS v, singer_id FROM singer WHERE singer_id < 4",
    )
    add(
        "column_swap",
        "SELECT a, b, c, d, e FROM wide",  # more than three columns: the test suite samples rows to prune
        "SELECT e, d, c, b, a FROM wide",
        "SELECT b, a, c, d, e FROM wide",
        "SELECT a, e, c, d, b FROM wide",
        "SELECT a, b, c, d, a FROM wide",
    )
    # numbers
    add(
        "floats",
        "SELECT avg(net_worth) FROM singer WHERE country = 'France'",
        "SELECT sum(net_worth) / count(net_worth) FROM singer WHERE country = 'France'",
        "SELECT round(avg(net_worth), 2) FROM singer WHERE country = 'France'",
        "SELECT sum(net_worth) / count(*) FROM singer WHERE country = 'France'",
    )
    add(
        "floats",
        "SELECT count(*) FROM singer WHERE country = 'France'",
        "SELECT count(*) * 1.0 FROM singer WHERE country = 'France'",
        "SELECT CAST(count(*) AS REAL) FROM singer WHERE country = 'France'",
        "SELECT count(*) / 2 FROM singer WHERE country = 'France'",
    )
    add(
        "floats",
        "SELECT CAST(sum(age) AS REAL) / count(*) FROM singer",
        "SELECT sum(age) / count(*) FROM singer",
        "SELECT avg(age) FROM singer",
    )
    add(
        "floats",
        "SELECT net_worth, name FROM singer WHERE singer_id = 5",  # 1.0 beside a name
        "SELECT 1, name FROM singer WHERE singer_id = 5",
        "SELECT name, 1 FROM singer WHERE singer_id = 5",
        "SELECT name, net_worth FROM singer WHERE singer_id = 5",
    )
    add(
        "floats",
        "SELECT value, '1.5' FROM singer WHERE singer_id = 5",  # int against float, sorted by str() in the test suite
        "SELECT 1.0, '1.5' FROM singer WHERE singer_id = 5",
        "SELECT '1.5', 1.0 FROM singer WHERE singer_id = 5",
    )
    # several statements
    add(
        "statements",
        "SELECT name FROM singer WHERE age < 30",
        "SELECT name FROM singer WHERE age < 30;",
        "SELECT name FROM singer WHERE age < 30; SELECT name FROM singer",
        "SELECT name FROM singer; SELECT name FROM singer WHERE age < 30",
        "SELECT name FROM singer WHERE age < 30 ; -- done",
        "SELECT name FROM singer WHERE name != 'a;b' AND age < 30; SELECT 1",
    )
    # spacing inside comparison operators
    for op, joined in (("> =", ">="), ("< =", "<="), ("! =", "!=")):
        add(
            "spacing",
            f"SELECT name FROM singer WHERE age {joined} 41",
            f"SELECT name FROM singer WHERE age {op} 41",
            f"SELECT name FROM singer WHERE age {joined} 41",
        )
    pairs.append(
        Pair("spacing", "SELECT name FROM singer WHERE age > = 41", "SELECT name FROM singer WHERE age >= 41", "spider")
    )
    add(
        "value_word",
        "SELECT name FROM singer WHERE singer_id = 1",
        "SELECT name FROM singer WHERE singer_id = value",
        "SELECT name FROM singer WHERE value = 1",
        "SELECT name FROM singer WHERE singer_id = 1 AND 'value' = 'value'",
    )
    # empty results
    add(
        "empty",
        "SELECT name FROM singer WHERE age > 100",
        "SELECT name FROM singer WHERE age > 200",
        "SELECT name, age FROM singer WHERE age > 200",
        "SELECT name FROM singer WHERE age > 60",
        "SELECT title FROM concert WHERE year = '2030'",
    )
    add("empty", "SELECT name FROM singer WHERE age > 20", "SELECT name FROM singer WHERE age > 100")
    # the test suite's second database tells apart queries that agree on the first
    add(
        "test_suite",
        "SELECT name FROM singer WHERE country = 'France' AND age > 40",
        "SELECT name FROM singer WHERE singer_id IN (4, 5)",
        "SELECT name FROM singer WHERE country = 'France' AND age >= 41",
    )
    add(
        "test_suite",
        "SELECT count(*) FROM singer WHERE country = 'Netherlands'",
        "SELECT count(*) FROM singer WHERE age = 52",
        "SELECT 1",
    )
    # 100,000-row results
    add(
        "large",
        "SELECT id, grp, label FROM big",
        "SELECT id, grp, label FROM big",
        "SELECT label, id, grp FROM big",
        "SELECT id, grp, label FROM big ORDER BY id DESC",
        "SELECT id, grp, label FROM big WHERE id <> 77",
        "SELECT id, grp, label FROM big UNION ALL SELECT 0, 0, 'label-0'",
        "SELECT id, (id + 1) % 7, label FROM big",
    )
    add(
        "large",
        "SELECT grp, score FROM big ORDER BY id",
        "SELECT grp, score FROM big ORDER BY id",
        "SELECT grp, score FROM big ORDER BY id DESC",
        "SELECT DISTINCT grp, score FROM big",
        "SELECT score, grp FROM big ORDER BY id",
    )
    add(
        "large",
        "SELECT DISTINCT label FROM big",
        "SELECT label FROM big",
        "SELECT label FROM big GROUP BY label",
    )
    return pairs + spider_behaviour() + generated()


def spider_behaviour() -> list[Pair]:
    """Pairs (Spider's only) where its test suite reads the text its own way, the released script the judge:
    statements split and DISTINCT dropped on sqlparse's tokens (literals, quoted names and comments
    kept), ``> =`` joined everywhere (in literals too), ORDER BY looked for as a plain substring of
    the gold's lowered text, NULLs sorted by ``str()``, and a gold larger than rewardhub's default
    ``max_gold_rows``."""
    pairs: list[Pair] = []

    def add(kind: str, gold: str, *predicted: str) -> None:
        pairs.extend(Pair(kind, gold, p, "spider") for p in predicted)

    add(
        "statements",
        "SELECT name FROM singer WHERE age < 30; SELECT name FROM singer",
        "SELECT name FROM singer WHERE age < 30",
        "SELECT name FROM singer",
        "SELECT name FROM singer WHERE age < 30;;",
    )
    add(
        "statements",
        "SELECT name FROM singer WHERE age < 30",
        "/* a; b */ SELECT name FROM singer WHERE age < 30; SELECT 2",
        "SELECT name FROM singer WHERE age < 30 -- ; trailing",
        'SELECT "name" FROM singer WHERE age < 30; SELECT 2; SELECT 3',
        "SELECT name FROM singer WHERE age < 30 AND name <> ';'; DROP TABLE singer",
        "; SELECT name FROM singer WHERE age < 30",
    )
    add(
        "distinct",
        "SELECT DISTINCT country FROM singer WHERE country <> 'distinct'",
        "SELECT country FROM singer WHERE country <> 'distinct'",
        "SELECT country FROM singer WHERE country <> 'DISTINCT'",
        "SELECT DISTINCT(country) FROM singer WHERE country IS NOT NULL",
    )
    add(
        "distinct",
        "SELECT count(DISTINCT(country)) FROM singer",
        "SELECT count(country) FROM singer",
        "SELECT COUNT(distinct country) FROM singer",
        "SELECT count(*) FROM (SELECT DISTINCT country FROM singer)",
        "SELECT count(*) FROM singer WHERE country IN (SELECT DISTINCT country FROM singer)",
    )
    add(
        "distinct",
        "SELECT name FROM singer UNION SELECT name FROM singer",
        "SELECT name FROM singer",
        "SELECT DISTINCT name FROM singer",
        "SELECT name FROM singer UNION ALL SELECT name FROM singer",
    )
    add(
        "spacing",
        "SELECT name FROM singer WHERE age >= 41 AND name <> 'a > = b'",
        "SELECT name FROM singer WHERE age > = 41 AND name <> 'a > = b'",
        "SELECT name FROM singer WHERE age >  = 41",
        "SELECT name FROM singer WHERE age >\t= 41",
        "SELECT name FROM singer WHERE NOT age < = 40",
    )
    add(
        "spacing",
        "SELECT count(*) FROM singer WHERE '> =' = '>='",
        "SELECT 1",
        "SELECT 0",
    )
    add(
        "order_by",
        "SELECT name, age FROM singer ORDER  BY age, name",  # two spaces: no 'order by' in the text
        "SELECT name, age FROM singer ORDER BY age DESC, name",
        "SELECT name, age FROM singer ORDER BY age, name",
    )
    add(
        "order_by",
        "SELECT name FROM singer WHERE name <> 'order by' AND age > 40",  # in a literal: ordered
        "SELECT name FROM singer WHERE age > 40 ORDER BY name DESC",
        "SELECT name FROM singer WHERE age > 40",
    )
    add(
        "order_by",
        "SELECT name FROM (SELECT name FROM singer ORDER BY age LIMIT 4)",  # ORDER BY in a subquery
        "SELECT name FROM singer ORDER BY age LIMIT 4",
        "SELECT name FROM (SELECT name, age FROM singer ORDER BY age LIMIT 4) ORDER BY name",
    )
    add(
        "order_by",
        "SELECT name, net_worth FROM singer ORDER BY net_worth DESC",  # NULL last
        "SELECT name, net_worth FROM singer ORDER BY net_worth DESC NULLS LAST",
        "SELECT name, net_worth FROM singer ORDER BY net_worth DESC NULLS FIRST",
        "SELECT net_worth, name FROM singer ORDER BY -net_worth",
    )
    add(
        "nulls",
        "SELECT country, net_worth FROM singer",
        "SELECT country, net_worth FROM singer UNION ALL SELECT NULL, NULL WHERE 0",
        "SELECT coalesce(country, 'None'), net_worth FROM singer",
        "SELECT country, net_worth FROM singer WHERE country IS NOT NULL",
        "SELECT net_worth, country FROM singer",
    )
    add(
        "nulls",
        "SELECT NULL",
        "SELECT 'None'",
        "SELECT NULL FROM singer WHERE singer_id = 1",
        "SELECT max(net_worth) FROM singer WHERE age > 100",
    )
    add(
        "duplicates",
        "SELECT country FROM singer",
        "SELECT country FROM singer UNION ALL SELECT 'France'",
        "SELECT country FROM singer WHERE singer_id <> 2 UNION ALL SELECT 'France'",
        "SELECT country FROM singer ORDER BY country",
    )
    add(
        "large",
        "SELECT T1.id FROM big AS T1 JOIN wide AS T2",  # 400,000 rows: past max_gold_rows' 200,000
        "SELECT T1.id FROM big AS T1 JOIN wide AS T2",
    )
    add(
        "large",
        "SELECT id FROM big WHERE id < 12000",
        "SELECT id FROM big WHERE id < 12000 ORDER BY id DESC",
        "SELECT id FROM big WHERE id <= 12000",
    )
    return pairs


# Generated pairs: each base query, as a gold plain, ordered or DISTINCT, against each rewrite of it.
BASES = [
    (["name", "age"], "FROM singer WHERE age >= 41"),
    (["country", "count(*)"], "FROM singer GROUP BY country"),
    (["name"], "FROM singer WHERE net_worth IS NULL OR age >= 50"),
    (["T2.name", "T1.concert_id"], "FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id"),
    (["title", "year"], "FROM concert WHERE year >= '2014'"),
    (["avg(net_worth)", "max(age)"], "FROM singer WHERE country = 'France'"),
    (["value", "singer_id"], "FROM singer WHERE singer_id <= 3"),
    (["a", "b", "c", "d"], "FROM wide"),
]
GOLD_FORMS = {
    "plain": lambda cols, rest: f"SELECT {', '.join(cols)} {rest}",
    "ordered": lambda cols, rest: f"SELECT {', '.join(cols)} {rest} ORDER BY 1",
    "distinct": lambda cols, rest: f"SELECT DISTINCT {', '.join(cols)} {rest}",
}
REWRITES = {
    "same": lambda cols, rest: f"SELECT {', '.join(cols)} {rest}",
    "distinct": lambda cols, rest: f"SELECT DISTINCT {', '.join(cols)} {rest}",
    "columns_reversed": lambda cols, rest: f"SELECT {', '.join(reversed(cols))} {rest}",
    "order_desc": lambda cols, rest: f"SELECT {', '.join(cols)} {rest} ORDER BY 1 DESC",
    "second_statement": lambda cols, rest: f"SELECT {', '.join(cols)} {rest}; SELECT 1",
    "doubled": lambda cols, rest: f"SELECT {', '.join(cols)} {rest} UNION ALL SELECT {', '.join(cols)} {rest}",
    "subquery": lambda cols, rest: f"SELECT * FROM (SELECT {', '.join(cols)} {rest})",
    "spaced_operator": lambda cols, rest: f"SELECT {', '.join(cols)} {rest.replace('>=', '> =')}",
    "limit_1": lambda cols, rest: f"SELECT {', '.join(cols)} {rest} LIMIT 1",
}


def generated() -> list[Pair]:
    return [
        Pair(f"generated:{form}/{rewrite}", gold(cols, rest), predict(cols, rest))
        for cols, rest in BASES
        for form, gold in GOLD_FORMS.items()
        for rewrite, predict in REWRITES.items()
    ]
