"""What Spider's test-suite evaluation does to a query's text before it runs it.

Read from ``evaluation.py`` and ``exec_eval.py`` of taoyds/test-suite-sql-eval (commit e97acc5),
in the order they apply:

1. the prediction only: every ``value`` becomes ``1`` (``p_str.replace("value", "1")``, meant for
   value-less predictions; it is a plain, case-sensitive substring replacement, so a column named
   ``value`` or a literal ``'value'`` changes too);
2. both: ``> =``, ``< =`` and ``! =`` (one space) become ``>=``, ``<=`` and ``!=`` (``postprocess``);
3. both, unless ``keep_distinct``: the first statement only, without any ``DISTINCT`` token
   (``remove_distinct``: sqlparse's first statement, its tokens with ``distinct`` dropped; so
   ``SELECT 1; SELECT 2`` runs as ``SELECT 1;`` and ``count(DISTINCT x)`` as ``count( x)``);
4. at run time: ``YEAR(CURDATE())`` becomes ``2020`` (``replace_cur_year``).

The gold's text after steps 2 and 3 is what ``ORDER BY`` is looked for in. Literals, quoted
identifiers and comments are skipped when statements are split and ``DISTINCT`` is dropped, as
sqlparse's tokens skip them; the replacements of steps 1, 2 and 4 apply everywhere, as the test
suite applies them.
"""

from __future__ import annotations

import re

from .statement import scan

__all__ = ["spider_gold_text", "spider_predicted_text", "spider_run_text"]

_SPACED_COMPARISONS = (("> =", ">="), ("< =", "<="), ("! =", "!="))
_DISTINCT = re.compile(r"(?<![\w$#])distinct(?![\w$#])", re.IGNORECASE)
_CURRENT_YEAR = re.compile(r"YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*", re.IGNORECASE)


def spider_predicted_text(sql: str, keep_distinct: bool = False) -> str:
    """The predicted query as the test suite runs it."""
    return spider_gold_text(sql.replace("value", "1"), keep_distinct)


def spider_gold_text(sql: str, keep_distinct: bool = False) -> str:
    """The gold query as the test suite runs it (and looks for ``ORDER BY`` in, before step 4)."""
    for spaced, joined in _SPACED_COMPARISONS:
        sql = sql.replace(spaced, joined)
    if not keep_distinct:
        sql = _without_distinct(_first_statement(sql))
    return sql


def spider_run_text(sql: str) -> str:
    """Step 4, applied when the query runs."""
    return _CURRENT_YEAR.sub("2020", sql)


def _first_statement(sql: str) -> str:
    """The text up to and including the first ``;`` outside literals and comments."""
    _, semicolon = scan(sql)
    return sql if semicolon is None else sql[: semicolon + 1]


def _without_distinct(sql: str) -> str:
    """``sql`` with each ``DISTINCT`` word outside literals, quoted names and comments removed."""
    code, _ = scan(sql)
    spans = [match.span() for match in _DISTINCT.finditer(code)]
    for start, end in reversed(spans):
        sql = sql[:start] + sql[end:]
    return sql
