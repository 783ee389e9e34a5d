"""Logs a person can read in a terminal, JSON lines for collectors, and a request id that follows
a sample from the API to the worker.

Two formats (``configure_logging``): ``text`` (``12:00:01.234 INFO  rewardhub: message  key=value
[req 1a2b3c4d]``), the default when the stream is a terminal, and ``json``, the default otherwise
(a file, a pipe, a container's log driver) and what ``--log-format json`` asks for everywhere.
One JSON log line is one JSON object: ``{"ts", "level", "logger", "message", "request_id", ...}``,
plus whatever ``extra={...}`` the call passed. The request id lives in a context variable:
the API sets it per HTTP request (``rewardhub.api.middleware.request_id``), asyncio tasks started inside the
request inherit it, the Celery executor copies it into each chunk's payload, and the worker sets
it again while it scores that chunk. So ``grep <id>`` over the API's and the workers' logs shows
one request's whole path.

Why a context variable and not a logging adapter: the id must reach log calls in code that
never sees the request (the scorer, the executor, verifiers' own loggers).
"""

from __future__ import annotations

import json
import logging
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, TextIO

__all__ = [
    "LOG_FORMATS",
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "current_request_id",
    "new_request_id",
    "request_context",
]

LOG_FORMATS = ("text", "json")
LogFormat = Literal["text", "json"]

_request_id: ContextVar[str | None] = ContextVar("rewardhub_request_id", default=None)

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is logged.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def new_request_id() -> str:
    """32 random hex digits, the shape of ``uuid4().hex`` without building a UUID object."""
    return secrets.token_hex(16)


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

    _second: tuple[int, str] = (-1, "")  # the last second formatted: a busy service logs many per second

    def format(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if second != self._second[0]:
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        entry: dict[str, Any] = {
            "ts": round(record.created, 6),
            "time": f"{self._second[1]}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or current_request_id(),
            "pid": record.process,
        }
        for key in sorted(record.__dict__.keys() - _STANDARD_ATTRS - entry.keys()):
            entry[key] = record.__dict__[key]
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message  key=value ... [req id]``, coloured by level on a terminal."""

    _COLOURS = {
        "DEBUG": "\033[2m",
        "INFO": "\033[32m",
        "WARNING": "\033[33m",
        "ERROR": "\033[31m",
        "CRITICAL": "\033[1;31m",
    }
    _RESET = "\033[0m"

    def __init__(self, colour: bool = False) -> None:
        super().__init__()
        self.colour = colour

    def format(self, record: logging.LogRecord) -> str:
        clock = time.strftime("%H:%M:%S", time.localtime(record.created)) + f".{int(record.msecs):03d}"
        level = f"{record.levelname:<7}"
        if self.colour:
            level = self._COLOURS.get(record.levelname, "") + level + self._RESET
        line = f"{clock} {level} {record.name}: {record.getMessage()}"
        extras = [f"{k}={v}" for k, v in vars(record).items() if k not in _STANDARD_ATTRS and k != "request_id"]
        if extras:
            line += "  " + " ".join(extras)
        request_id = getattr(record, "request_id", None) or current_request_id()
        if request_id:
            line += f"  [req {request_id[:12]}]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure_logging(
    level: str | int = "info", log_format: LogFormat | None = None, stream: TextIO | None = None
) -> None:
    """Send every logger's records to ``stream`` (stderr): ``text`` on a terminal, else JSON lines."""
    stream = stream or sys.stderr
    terminal = _is_terminal(stream)
    handler = logging.StreamHandler(stream)
    if (log_format or ("text" if terminal else "json")) == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter(colour=terminal))
    handler._rewardhub = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for existing in list(root.handlers):  # replace our own earlier handler and plain stream ones,
        if getattr(existing, "_rewardhub", False) or type(existing) is logging.StreamHandler:
            root.removeHandler(existing)  # but keep others (test log capture, file handlers)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stream-like object without a descriptor
        return False
