"""The ``sql`` verifier: text-to-SQL rewards by running the query, as BIRD and Spider do.

Modules, in the order a response flows through them: ``statement`` (read the query out of the
response; refuse anything but one read-only statement), ``database`` (find or build the SQLite
database; run the query read-only under a time limit and a row cap), ``compare`` (BIRD's and
Spider's rules), ``verifier`` (the :class:`SqlVerifier` the registry loads); ``errors`` names why a
query gave no rows.
"""

from .compare import bird_match, spider_match, spider_order_matters
from .database import DATA_DIR_ENV, Limits, run_query
from .errors import QueryError, QueryFailed, QueryRefused, QueryTimedOut, TooManyRows
from .statement import extract_sql, single_statement
from .verifier import SqlReference, SqlVerifier

__all__ = [
    "DATA_DIR_ENV",
    "Limits",
    "QueryError",
    "QueryFailed",
    "QueryRefused",
    "QueryTimedOut",
    "SqlReference",
    "SqlVerifier",
    "TooManyRows",
    "bird_match",
    "extract_sql",
    "run_query",
    "single_statement",
    "spider_match",
    "spider_order_matters",
]
