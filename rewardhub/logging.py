"""Structured JSON logs with a request id that follows a sample from the API to the worker.

One log line is one JSON object: ``{"ts", "level", "logger", "message", "request_id", ...}``,
plus whatever ``extra={...}`` the call passed. The request id lives in a context variable:
the API sets it per HTTP request (``rewardhub.api.request_id``), asyncio tasks started inside the
request inherit it, the Celery executor copies it into each chunk's payload, and the worker sets
it again while it scores that chunk. So ``grep <id>`` over the API's and the workers' logs shows
one request's whole path.

Why a context variable and not a logging adapter: the id must reach log calls in code that
never sees the request (the scorer, the executor, verifiers' own loggers).
"""

from __future__ import annotations

import json
import logging
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TextIO

__all__ = [
    "JsonFormatter",
    "configure_logging",
    "current_request_id",
    "new_request_id",
    "request_context",
]

_request_id: ContextVar[str | None] = ContextVar("rewardhub_request_id", default=None)

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is logged.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def new_request_id() -> str:
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    """The id of the request this code is serving, if any."""
    return _request_id.get()


@contextmanager
def request_context(request_id: str | None) -> Iterator[str | None]:
    """Make ``request_id`` current for the duration of the block (None leaves no id)."""
    token = _request_id.set(request_id)
    try:
        yield request_id
    finally:
        _request_id.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per line; never raises on odd ``extra`` values (they become strings)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 6),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or current_request_id(),
            "pid": record.process,
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(level: str | int = "info", json_lines: bool = True, stream: TextIO | None = None) -> None:
    """Send every logger's records to ``stream`` (stderr), as JSON lines unless told otherwise."""
    handler = logging.StreamHandler(stream or sys.stderr)
    if json_lines:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._rewardhub = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for existing in list(root.handlers):  # replace our own earlier handler and plain stream ones,
        if getattr(existing, "_rewardhub", False) or type(existing) is logging.StreamHandler:
            root.removeHandler(existing)  # but keep others (test log capture, file handlers)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
