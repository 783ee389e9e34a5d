"""Why a query gave no rows to compare. The verifier turns each into a reason in ``details``.

QueryError                 the query gave no result; ``reason`` is the short code
├── QueryRefused           refused before or while it was compiled (a write, ATTACH, two statements)
├── QueryFailed            SQLite raised (syntax, a missing table or column)
├── QueryTimedOut          interrupted at the query time limit
└── TooManyRows            more rows than the row cap

A predicted query that fails this way is the policy's mistake and scores 0 with the reason; a gold
query that does is the reference's, and the sample gets status ``error``.
"""

from __future__ import annotations

__all__ = ["QueryError", "QueryFailed", "QueryRefused", "QueryTimedOut", "TooManyRows"]


class QueryError(Exception):
    reason = "sql_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class QueryRefused(QueryError):
    reason = "refused"


class QueryFailed(QueryError):
    reason = "sql_error"


class QueryTimedOut(QueryError):
    reason = "query_timeout"


class TooManyRows(QueryError):
    reason = "row_cap"
