"""The ``sql`` verifier: text-to-SQL rewards by running the query, as BIRD and Spider do.

Modules, in the order a response flows through them: ``statement`` (read the query out of the
response; refuse anything but one read-only statement), ``database`` (find or build the SQLite
database; run the query read-only under a time limit and a row cap), ``compare`` (BIRD's and
Spider's rules, on row digests from :mod:`.digest`), ``spider_text`` (what Spider's test suite does to
a query's text), ``semantics`` (scoring by a benchmark's own semantics), ``verifier`` (the
:class:`SqlVerifier` the registry loads); ``errors`` names why a query gave no rows.
"""

from .compare import BirdGold, SpiderGold, bird_match, spider_match, spider_order_matters
from .database import DATA_DIR_ENV, Limits, query_rows, run_query
from .errors import QueryError, QueryFailed, QueryRefused, QueryTimedOut, TooManyRows
from .spider_text import spider_gold_text, spider_predicted_text
from .statement import extract_sql, single_statement
from .verifier import SqlReference, SqlVerifier

__all__ = [
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
