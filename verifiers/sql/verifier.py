"""``sql``: text-to-SQL by execution, the way BIRD and Spider score it.

The predicted query (read from the response: a fenced ``sql`` block, SkyRL's ``<solution>``, or
the text) runs on a SQLite database, read-only, under a time limit and a row cap
(:mod:`.database`), and its rows are compared with the gold's by BIRD's rule or, selectable,
Spider's (:mod:`.compare`). The reference names the database and gives the gold:

``{"db_id": "concert_singer"}`` (the file ``<data dir>/concert_singer/concert_singer.sqlite``, the
layout BIRD and Spider ship), or ``{"db_path": "spider/x.sqlite"}`` (any file under the data
directory), or ``{"database": name}`` (the API contract's: ``<name>/<name>.sqlite``, else
``<name>.sqlite``, else the file ``<name>``, under the data directory), or ``{"schema": "CREATE
TABLE ...", "rows": {"table": [[...], ...]}}`` inline (``setup_sql``, the contract's name, is the
same schema: DDL and INSERTs); and ``gold_sql`` (BIRD's ``SQL``, Spider's ``query`` and NeMo-Gym's
``gt_sql`` are read too) or ``gold_result`` (rows; ``ordered``, or the contract's
``order_matters``, says whether their order counts: under Spider's rule, and under BIRD's when true). Other
fields of a data set's row (``question``, ``evidence``) are ignored.

A predicted query that is missing, refused, fails, times out or passes the row cap scores 0 with
the reason in ``details``, as the benchmarks score it; a gold that cannot be run, or a reference
that names no database, is status ``error`` naming the field. It does not judge dialects other
than SQLite's, or whether a query is efficient.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..text import strip_think
from .compare import bird_match, spider_match, spider_order_matters
from .database import Database, Limits, data_dir, database_file, inline_database, run_query
from .errors import QueryError
from .semantics import benchmark_score
from .statement import extract_sql, single_statement

__all__ = ["SqlReference", "SqlVerifier"]

_GOLD_ALIASES = ("gold_sql", "SQL", "query", "gt_sql")


class SqlReference(BaseModel):
    """A sample's ``reference``: one database and one gold (query or rows)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    db_id: str | None = Field(None, min_length=1)
    db_path: str | None = Field(None, min_length=1)
    database: str | None = Field(None, min_length=1)
    db_schema: str | None = Field(None, alias="schema")
    rows: dict[str, list[list[Any]]] = Field(default_factory=dict)
    gold_sql: str | None = None
    gold_result: list[list[Any]] | None = None
    ordered: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _gold_by_any_name(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = _contract_names(data)
        if isinstance(data, dict) and data.get("gold_sql") is None:
            for alias in _GOLD_ALIASES[1:]:
                if isinstance(data.get(alias), str):
                    return {**data, "gold_sql": data[alias]}
        return data

    @model_validator(mode="after")
    def _one_database_one_gold(self) -> SqlReference:
        named = [name for name in ("db_id", "db_path", "database", "schema") if self._given(name)]
        if len(named) != 1:
            raise ValueError(f"name one database (db_id, db_path, database or schema), not {named or 'none'}")
        if self.rows and self.db_schema is None:
            raise ValueError("rows need an inline schema")
        if (self.gold_sql is None) == (self.gold_result is None):
            raise ValueError("give gold_sql (or SQL, query, gt_sql) or gold_result: exactly one")
        return self

    def _given(self, name: str) -> bool:
        return getattr(self, "db_schema" if name == "schema" else name) is not None


_CONTRACT_NAMES = {"setup_sql": "schema", "order_matters": "ordered"}


def _contract_names(data: dict[str, Any]) -> dict[str, Any]:
    """The API contract's field names as this reference's: ``setup_sql`` is ``schema``,
    ``order_matters`` is ``ordered`` (both given: refused, as two databases are)."""
    out = dict(data)
    for theirs, ours in _CONTRACT_NAMES.items():
        if theirs in out:
            if ours in out:
                raise ValueError(f"give {theirs} or {ours}, not both")
            out[ours] = out.pop(theirs)
    return out


class SqlVerifier(Verifier):
    """The predicted SQL query returns the gold's rows on a read-only SQLite database (BIRD's or Spider's rule)."""

    name = "sql"
    version = "1"
    kind = "rule"
    exploit_corpus = "sql"

    class Config(VerifierConfig):
        semantics: Literal["rewardhub", "bird", "spider"] = Field(
            "rewardhub",
            description="rewardhub: one read-only statement, compared by `rule` under the `max_rows` cap, `ordered` "
            "honoured (the safest). bird: BIRD's evaluation.py (the same set of rows). spider: the test-suite "
            "execution match (DISTINCT dropped and the first statement run, '> =' joined, 'value' read as 1, "
            "every database of the test suite). Both compare results of any size up to max_gold_rows.",
        )
        rule: Literal["bird", "spider"] = Field(
            "bird",
            description="Under semantics rewardhub: bird: the same set of rows. spider: the same rows up to a column "
            "permutation, in order when the gold query has ORDER BY (the test-suite execution match).",
        )
        answer_format: Literal["auto", "sql_block", "raw"] = Field(
            "auto",
            description="sql_block: the last ```sql block only (NeMo-Gym's bird_sql); auto: that, else the last "
            "fenced block, else <solution>/<answer>/<sql>, else the text; raw: the whole text.",
        )
        query_timeout_s: float = Field(5.0, gt=0, le=300, description="Each query is interrupted after this long.")
        max_rows: int = Field(
            10_000, ge=1, le=1_000_000, description="Under semantics rewardhub: a query returning more rows scores 0."
        )
        max_gold_rows: int = Field(
            200_000,
            ge=1,
            le=10_000_000,
            description="Under semantics bird and spider: a gold of more rows is refused (status error); about 100 "
            "bytes of memory a row while it is compared.",
        )
        keep_distinct: bool = Field(
            False,
            description="Under semantics spider: the test suite's --keep_distinct (DISTINCT kept, all statements run).",
        )
        strip_think: bool = Field(True, description="Ignore a leading <think>...</think> block.")

        @model_validator(mode="after")
        def _settings_of_the_semantics(self) -> SqlVerifier.Config:
            if self.semantics != "rewardhub" and {"rule", "max_rows"} & self.model_fields_set:
                raise ValueError(f"rule and max_rows apply to semantics rewardhub, not {self.semantics}")
            if self.semantics != "spider" and "keep_distinct" in self.model_fields_set:
                raise ValueError("keep_distinct applies to semantics spider")
            return self

    def score(self, sample: Sample, config: Config) -> Result:
        reference = _reference(sample.reference)
        database = _database(reference, config.query_timeout_s)
        if config.semantics != "rewardhub":
            suite = config.semantics == "spider" and reference.gold_sql is not None  # gold rows hold for one database
            databases = _test_suite(database) if suite else [database]
        text = strip_think(sample.response) if config.strip_think else sample.response
        predicted_sql = extract_sql(text, config.answer_format)
        if config.semantics != "rewardhub":
            return benchmark_score(
                config.semantics, databases, reference.gold_sql, reference.gold_result, reference.ordered,
                predicted_sql, config,
            )  # fmt: skip
        limits = Limits(timeout_s=config.query_timeout_s, max_rows=config.max_rows)
        gold = _gold_rows(reference, database, limits)
        if predicted_sql is None:
            return Result.ok(0.0, reason="no_sql", error="the response holds no SQL query", semantics="rewardhub")
        try:
            predicted = run_query(database, single_statement(predicted_sql), limits)
        except QueryError as exc:
            return Result.ok(
                0.0, reason=exc.reason, error=exc.message, predicted_sql=predicted_sql[:2000], semantics="rewardhub"
            )
        matched = _match(config.rule, reference, gold, predicted)
        return Result.ok(
            1.0 if matched else 0.0,
            reason="match" if matched else "mismatch",
            semantics="rewardhub",
            rule=config.rule,
            predicted_sql=predicted_sql[:2000],
            predicted_rows=len(predicted),
            gold_rows=len(gold),
        )


def _reference(raw: Any) -> SqlReference:
    if not isinstance(raw, dict):
        raise VerifierError(
            f"sql needs reference as an object (db_id/db_path/schema and gold_sql/gold_result), got {type(raw).__name__}"
        )
    try:
        return SqlReference.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"reference.{'.'.join(map(str, e['loc'])) or ''}: {e['msg']}".replace("reference.:", "reference:")
            for e in exc.errors()
        )
        raise VerifierError(problems) from None


def _database(reference: SqlReference, timeout_s: float) -> Database:
    try:
        if reference.db_schema is not None:
            return inline_database(reference.db_schema, reference.rows, timeout_s)
        if reference.db_id is not None:
            if "/" in reference.db_id or "\\" in reference.db_id or reference.db_id in (".", ".."):
                raise ValueError(f"{reference.db_id!r} is a path, not a database id")
            return database_file(f"{reference.db_id}/{reference.db_id}.sqlite")
        if reference.database is not None:
            return _named_database(reference.database)
        return database_file(reference.db_path or "")
    except ValueError as exc:
        field = "schema" if reference.db_schema is not None else ("db_id" if reference.db_id else "db_path")
        field = "database" if reference.database is not None else field
        raise VerifierError(f"reference.{field}: {exc}") from None


def _test_suite(database: Database) -> list[Database]:
    """The databases Spider's test suite runs a query on: every ``*.sqlite`` file in the folder of a
    database laid out as ``<name>/<name>.sqlite`` (the gold's database first), else that one alone."""
    if not isinstance(database, Path) or database.name != f"{database.parent.name}.sqlite":
        return [database]
    others = []
    for entry in sorted(os.listdir(database.parent)):
        if ".sqlite" not in entry or entry == database.name:
            continue
        try:
            others.append(database_file(str(database.relative_to(data_dir()).parent / entry)))
        except ValueError as exc:
            if "is not a file" in str(exc):
                continue  # a folder named like a database is no database
            raise VerifierError(f"reference: the test suite beside {database.name}: {exc}") from None
    return [database, *others]


def _named_database(name: str) -> Path:
    """A database by name under the data directory: BIRD's and Spider's ``<name>/<name>.sqlite``,
    else ``<name>.sqlite``, else the file ``<name>`` itself; the first that exists."""
    tried = [f"{name}/{name}.sqlite", f"{name}.sqlite", name] if "/" not in name else [name]
    for relative in tried:
        try:
            return database_file(relative)
        except ValueError as exc:
            if "is not a file" not in str(exc):
                raise
    raise ValueError(f"no database {name!r} under the data directory (looked for {', '.join(tried)})")


def _gold_rows(reference: SqlReference, database: Database, limits: Limits) -> list[tuple[Any, ...]]:
    if reference.gold_result is not None:
        return [tuple(row) for row in reference.gold_result]
    try:
        return list(_gold_query_rows(database, reference.gold_sql or "", limits))
    except QueryError as exc:
        raise VerifierError(f"reference.gold_sql could not be run ({exc.reason}): {exc.message}") from None


GOLD_CACHE = 256
_gold: OrderedDict[tuple[str, str, Limits], tuple[tuple[Any, ...], ...]] = OrderedDict()
_gold_lock = threading.Lock()


def _gold_query_rows(database: Database, gold_sql: str, limits: Limits) -> tuple[tuple[Any, ...], ...]:
    """The gold's rows, run once per process for the many samples of one prompt (a group shares its gold).

    Keyed by the file and its modification time, so a database replaced under the data directory
    is read anew, or by an inline database's digest: never by the database itself, which would
    keep an image its own cache has let go. A gold that fails is not remembered.
    """
    name = database.key if not isinstance(database, Path) else f"{database}@{database.stat().st_mtime_ns}"
    key = (name, gold_sql, limits)
    with _gold_lock:
        rows = _gold.get(key)
        if rows is not None:
            _gold.move_to_end(key)
            return rows
    rows = tuple(run_query(database, single_statement(gold_sql), limits))
    with _gold_lock:
        _gold[key] = rows
        while len(_gold) > GOLD_CACHE:
            _gold.popitem(last=False)
    return rows


def _match(rule: str, reference: SqlReference, gold: list, predicted: list) -> bool:
    if rule == "bird":  # a set of rows, unless the reference says their order counts: then the same list
        return bird_match(gold, predicted) and (not reference.ordered or list(gold) == list(predicted))
    ordered = reference.ordered
    if ordered is None:
        ordered = spider_order_matters(reference.gold_sql) if reference.gold_sql is not None else False
    try:
        return spider_match(gold, predicted, ordered)
    except ValueError as exc:
        raise VerifierError(f"Spider's rule could not decide: {exc}") from None
