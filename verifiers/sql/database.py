"""Where a query runs: a SQLite database opened read-only, where writing is made impossible.

Every query gets its own connection, opened with the ``mode=ro`` URI, and runs inside a
transaction that is rolled back. On top of that, an authorizer sees every compiled statement and
allows only reading (tables, views, functions, recursive CTEs, the schema-reading pragmas): an
``INSERT`` hidden in a ``WITH``, ``load_extension()``, ``ATTACH`` (and ``VACUUM INTO``, which
attaches) and any ``PRAGMA`` that sets something are refused with a reason. SQLite's own limits
stop the rest: no database may be attached at all, and no string or blob grows past
``MAX_VALUE_BYTES``. A progress handler interrupts the query at its time limit, and at most
``max_rows`` rows are fetched.

The database is a file under the data directory the operator names in ``sql_data_dir`` (``REWARDHUB_SQL_DATA_DIR``)
(a path that leaves it, by ``..`` or a link, is refused), or one built from the reference's own
schema and rows (:class:`InlineDatabase`).

An inline database never touches the disk: it is built in a ``:memory:`` connection and kept as
SQLite's serialized image (``Connection.serialize``), and each query runs on a private copy of
that image (``deserialize``, with ``PRAGMA query_only`` where a file would be opened ``mode=ro``).
Why memory and not files: a process pool's workers are killed, not exited, so clean-up at exit
never ran and every worker left its databases in /tmp (235 MB after one clean stop); and a kill -9
runs no code at all. Memory goes with the process, whatever ends it. Built images are kept per
process, least recently used first out, within :data:`INLINE_CACHE` databases and
:data:`INLINE_CACHE_BYTES` bytes (:class:`InlineCache`), so a group's samples build their database
once and a worker's memory stays bounded (each image is at most :data:`MAX_INLINE_BYTES`).

Not covered: SQLite's memory use inside the time limit (the worker's own memory limit bounds it),
and dialects other than SQLite's.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from rewardhub.settings import current

from .errors import QueryError, QueryFailed, QueryRefused, QueryTimedOut, TooManyRows

__all__ = [
    "DATA_DIR_ENV",
    "Database",
    "InlineCache",
    "InlineDatabase",
    "Limits",
    "data_dir",
    "database_file",
    "inline_database",
    "query_rows",
    "run_query",
]

DATA_DIR_ENV = "REWARDHUB_SQL_DATA_DIR"
MAX_VALUE_BYTES = 16 * 1024 * 1024
MAX_INLINE_BYTES = 64 * 1024 * 1024  # one inline database
INLINE_CACHE = 32  # built databases kept per process
INLINE_CACHE_BYTES = 256 * 1024 * 1024  # and their images together

_READ_PRAGMAS = frozenset(
    {
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "collation_list", "function_list", "module_list", "pragma_list",
        "database_list", "user_version", "schema_version", "application_id", "encoding",
        "page_size", "page_count", "freelist_count", "data_version",
    }
)  # fmt: skip
_NAME_ARGUMENT_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
)  # their argument names a table or an index; on any other pragma an argument sets a value
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
_BUILD_PRAGMAS = frozenset({"foreign_keys", "defer_foreign_keys", "encoding", "page_size", "user_version"})
_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_ACTION_NAMES = {
    getattr(sqlite3, name): name.removeprefix("SQLITE_").replace("_", " ")
    for name in dir(sqlite3)
    if name.startswith(("SQLITE_CREATE", "SQLITE_DROP", "SQLITE_ALTER"))
    or name in ("SQLITE_INSERT", "SQLITE_UPDATE", "SQLITE_DELETE", "SQLITE_TRANSACTION", "SQLITE_SAVEPOINT")
    or name in ("SQLITE_ANALYZE", "SQLITE_REINDEX", "SQLITE_ATTACH", "SQLITE_DETACH")
}


@dataclass(frozen=True)
class Limits:
    """How long one query may run and how many rows it may return."""

    timeout_s: float
    max_rows: int


def data_dir() -> Path:
    """The operator's data directory (the settings' ``sql_data_dir``), resolved; ValueError when none is set."""
    root = current().sql_data_dir
    if not root:
        raise ValueError(f"no SQL data directory is configured (set {DATA_DIR_ENV} on the server)")
    return Path(root).resolve()


def database_file(relative: str) -> Path:
    """``relative`` under the operator's data directory; ValueError names what is wrong."""
    base = data_dir()
    if Path(relative).is_absolute():
        raise ValueError(f"{relative!r} is absolute: name a file under the data directory")
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise ValueError(f"{relative!r} leaves the data directory")
    if not path.is_file():
        raise ValueError(f"{relative!r} is not a file under the data directory")
    return path


@dataclass(frozen=True, eq=False)
class InlineDatabase:
    """A database built from a reference's schema and rows: its serialized image, in memory.

    ``key`` (the digest of the schema and rows) is what caches know it by, so that no cache of
    results keeps an evicted image alive.
    """

    key: str
    image: bytes = field(repr=False)


Database = Path | InlineDatabase
"""Where a query runs: a file under the data directory, or an inline database."""


class InlineCache:
    """Built inline databases by key, least recently used first out, within ``entries`` databases
    and ``max_bytes`` bytes of images together; safe to share between threads."""

    def __init__(self, entries: int, max_bytes: int) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._kept: OrderedDict[str, InlineDatabase] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: str) -> InlineDatabase | None:
        with self._lock:
            database = self._kept.get(key)
            if database is not None:
                self._kept.move_to_end(key)
            return database

    def put(self, database: InlineDatabase) -> None:
        with self._lock:
            if database.key in self._kept:
                return
            self._kept[database.key] = database
            self.nbytes += len(database.image)
            while self._kept and (len(self._kept) > self.entries or self.nbytes > self.max_bytes):
                _, old = self._kept.popitem(last=False)
                self.nbytes -= len(old.image)


_cache = InlineCache(INLINE_CACHE, INLINE_CACHE_BYTES)


def inline_database(schema: str, rows: Mapping[str, list[list[Any]]], timeout_s: float) -> InlineDatabase:
    """The database built from the reference's schema (SQL) and rows (table -> rows), cached."""
    key = hashlib.sha256(json.dumps([schema, rows], sort_keys=True, default=repr).encode()).hexdigest()
    database = _cache.get(key)
    if database is None:
        database = InlineDatabase(key, _build(schema, rows, timeout_s))
        _cache.put(database)
    return database


def _build(schema: str, rows: Mapping[str, list[list[Any]]], timeout_s: float) -> bytes:
    denied: list[str] = []
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        _limit(conn)
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {MAX_INLINE_BYTES // page_size}")
        conn.set_authorizer(_build_authorizer(denied))
        conn.set_progress_handler(_deadline(timeout_s), 1000)
        try:
            conn.executescript(schema)
            for table, table_rows in rows.items():
                if not table_rows:
                    continue
                width = len(table_rows[0])
                marks = ", ".join("?" * width)
                conn.execute("BEGIN")
                conn.executemany(f"INSERT INTO {_quote(table)} VALUES ({marks})", table_rows)
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise ValueError(_why(exc, denied, timeout_s)) from None
        conn.set_authorizer(None)  # serializing reads PRAGMA page_count, which a schema may not
        return conn.serialize()
    finally:
        conn.close()


def _build_authorizer(denied: list[str]) -> Callable[..., int]:
    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return _deny(denied, "ATTACH and DETACH are refused")
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
            return _deny(denied, f"{arg2}() is refused")
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in _BUILD_PRAGMAS:
            return _deny(denied, f"PRAGMA {arg1} is refused in an inline schema")
        return sqlite3.SQLITE_OK

    return authorize


def run_query(database: Database, sql: str, limits: Limits) -> list[tuple[Any, ...]]:
    """The rows ``sql`` returns on ``database``, read-only; a QueryError otherwise."""
    with query_rows(database, sql, limits.timeout_s) as rows:
        fetched = list(islice(rows, limits.max_rows + 1))
    if len(fetched) > limits.max_rows:
        raise TooManyRows(f"the query returns more than {limits.max_rows} rows (the row cap, max_rows)")
    return fetched


@contextmanager
def query_rows(database: Database, sql: str, timeout_s: float) -> Iterator[Iterator[tuple[Any, ...]]]:
    """The rows ``sql`` returns on ``database``, read-only, as they are fetched: a QueryError otherwise.

    The rows stream (a few hundred at a time), so a large result is never held whole. The time
    limit counts SQLite's time (running the statement and fetching its rows), not the time the
    caller spends on the rows between fetches.
    """
    conn = _connect(database)
    denied: list[str] = []
    clock = _SqliteClock(timeout_s)
    try:
        conn.text_factory = lambda raw: raw.decode(errors="ignore")  # BIRD's evaluation reads text this way
        _limit(conn)
        conn.execute("BEGIN")
        conn.set_authorizer(_query_authorizer(denied))
        conn.set_progress_handler(clock.over, 1000)
        try:
            with clock:
                cursor = conn.execute(sql)
        except sqlite3.Warning as exc:  # "You can only execute one statement at a time."
            raise QueryRefused(f"multiple statements are refused ({exc})") from None
        except sqlite3.Error as exc:
            raise _query_error(exc, denied, timeout_s) from None
        yield _fetch(cursor, clock, denied, timeout_s)
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


_FETCH = 256


class _SqliteClock:
    """Time spent inside SQLite's calls for one query, against its limit."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.spent = 0.0
        self.since: float | None = None

    def __enter__(self) -> _SqliteClock:
        self.since = time.monotonic()
        return self

    def __exit__(self, *_: object) -> None:
        if self.since is not None:
            self.spent += time.monotonic() - self.since
        self.since = None

    def over(self) -> int:
        """The progress handler: non-zero interrupts the statement."""
        return int(self.since is not None and self.spent + time.monotonic() - self.since > self.limit_s)


def _fetch(
    cursor: sqlite3.Cursor, clock: _SqliteClock, denied: list[str], timeout_s: float
) -> Iterator[tuple[Any, ...]]:
    while True:
        try:
            with clock:
                rows = cursor.fetchmany(_FETCH)
        except sqlite3.Error as exc:
            raise _query_error(exc, denied, timeout_s) from None
        if not rows:
            return
        yield from rows


def _query_error(exc: sqlite3.Error, denied: list[str], timeout_s: float) -> QueryError:
    if denied:
        return QueryRefused(denied[0])
    message = _why(exc, denied, timeout_s)
    if "interrupted" in str(exc):
        return QueryTimedOut(message)
    return QueryFailed(message)


def _connect(database: Database) -> sqlite3.Connection:
    """A connection of the query's own: the file opened read-only, or a private copy of the image."""
    if isinstance(database, Path):
        return sqlite3.connect(f"file:{pathname2url(str(database))}?mode=ro", uri=True, isolation_level=None)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.deserialize(database.image)
        conn.execute("PRAGMA query_only = ON")  # what mode=ro is to a file
    except BaseException:
        conn.close()
        raise
    return conn


def _query_authorizer(denied: list[str]) -> Callable[..., int]:
    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        if action in _READ_ACTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            if (arg2 or "").lower() in _DENIED_FUNCTIONS:
                return _deny(denied, f"{arg2}() is refused")
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            if name in _READ_PRAGMAS and (arg2 is None or name in _NAME_ARGUMENT_PRAGMAS):
                return sqlite3.SQLITE_OK
            what = f"PRAGMA {name}" + (f" = {arg2}" if arg2 is not None else "")
            return _deny(denied, f"{what} is refused: PRAGMA writes and side effects are not run")
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return _deny(denied, f"ATTACH and DETACH are refused ({arg1 or ''})".replace(" ()", ""))
        what = _ACTION_NAMES.get(action, f"action {action}")
        target = f" {arg1}" if arg1 else ""
        return _deny(denied, f"{what}{target} is refused: the query runs read-only")

    return authorize


def _deny(denied: list[str], message: str) -> int:
    denied.append(message)
    return sqlite3.SQLITE_DENY


def _limit(conn: sqlite3.Connection) -> None:
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)


def _deadline(timeout_s: float) -> Callable[[], int]:
    deadline = time.monotonic() + timeout_s
    return lambda: int(time.monotonic() > deadline)


def _why(exc: sqlite3.Error, denied: list[str], timeout_s: float) -> str:
    if denied:
        return denied[0]
    if "interrupted" in str(exc):
        return f"interrupted at the query time limit ({timeout_s:g} s)"
    return f"{type(exc).__name__}: {exc}"


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
