"""Reading the predicted query out of a response, and refusing what is not one read-only query.

SQLite runs whatever text it is handed; the checks here come before it runs. The text is scanned
once with comments and quoted literals skipped (so a ``;`` or ``ATTACH`` inside a string is data,
not syntax): more than one statement is refused, and so is a statement that does not begin with
``SELECT``, ``WITH``, ``VALUES`` or ``PRAGMA``. What a statement does once it runs (a write in a
``WITH ... DELETE``, ``load_extension()``, a ``PRAGMA`` that sets something) is refused by the
authorizer in :mod:`.database`, which sees the compiled statement rather than its spelling.
"""

from __future__ import annotations

import re

from ..elements import elements
from .errors import QueryRefused

__all__ = ["extract_sql", "scan", "single_statement"]

LEADING_KEYWORDS = ("SELECT", "WITH", "VALUES", "PRAGMA")

# NeMo-Gym's bird_sql rule: the last ```sql fence (the tag matched case-insensitively, \b so that
# ```sqlite does not count) whose body holds a letter; a leading **bold** header is dropped.
_SQL_FENCE = re.compile(r"(?:```sql\b)(.*?[a-zA-Z].*?)(?:```)", re.DOTALL | re.IGNORECASE)
_ANY_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n?(.*?)```", re.DOTALL)
_TAGS = ("solution", "answer", "sql")
_BOLD_HEADER = re.compile(r"^\*\*.*\*\*")
_WORD = re.compile(r"[A-Za-z_]+")


def extract_sql(text: str, answer_format: str) -> str | None:
    """The query a response gives, or None when it gives none.

    ``sql_block``: NeMo-Gym's bird_sql rule (the last fenced ``sql`` block, nothing else).
    ``auto``: that, else the last fenced block of any language, else the last ``<solution>``,
    ``<answer>`` or ``<sql>`` element (SkyRL's SQL environment answers in ``<solution>``), else
    the whole text. ``raw``: the whole text.
    """
    if answer_format == "raw":
        return text.strip() or None
    fenced = _SQL_FENCE.findall(text)
    if fenced:
        return _BOLD_HEADER.sub("", fenced[-1].strip()).strip() or None
    if answer_format == "sql_block":
        return None
    blocks = [block.strip() for block in _ANY_FENCE.findall(text) if block.strip()]
    if blocks:
        return blocks[-1]
    found = sorted(element for tag in _TAGS for element in elements(text, tag))
    tagged = [body.strip() for _, _, body in found if body.strip()]
    if tagged:
        return tagged[-1]
    return text.strip() or None


def single_statement(sql: str) -> str:
    """``sql`` as one statement (trailing ``;`` and comments dropped), or :class:`QueryRefused`."""
    code, end = scan(sql)
    rest = code[end:] if end is not None else ""
    if rest.strip(" \t\r\n\f;"):
        raise QueryRefused("multiple statements are refused: the query must be one statement")
    statement = sql[:end] if end is not None else sql
    words = _WORD.findall(code[: end if end is not None else len(code)])
    if not words:
        raise QueryRefused("the query is empty (only comments or semicolons)")
    first = words[0].upper()
    if first not in LEADING_KEYWORDS:
        raise QueryRefused(f"only a query is run (SELECT, WITH, VALUES or a read-only PRAGMA); {first} is refused")
    return statement.strip()


def scan(sql: str) -> tuple[str, int | None]:
    """The text with comments and literals blanked out, and where its first ``;`` is (or None).

    Blanking keeps offsets: a literal becomes spaces of its own length, so the code view and the
    original line up and the statement can be cut from the original at the ``;``.
    """
    out: list[str] = []
    i, n, first_semicolon = 0, len(sql), None
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
        elif ch == "/" and sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif ch in "'\"`":
            j = _closing_quote(sql, i, ch)
        elif ch == "[":
            j = sql.find("]", i + 1)
            j = n if j < 0 else j + 1
        else:
            if ch == ";" and first_semicolon is None:
                first_semicolon = i
            out.append(ch)
            i += 1
            continue
        out.append(" " * (j - i))
        i = j
    return "".join(out), first_semicolon


def _closing_quote(sql: str, start: int, quote: str) -> int:
    """The offset just past the literal that opens at ``start`` (a doubled quote is an escape)."""
    i = start + 1
    while True:
        j = sql.find(quote, i)
        if j < 0:
            return len(sql)
        if sql.startswith(quote * 2, j):
            i = j + 2
            continue
        return j + 1
