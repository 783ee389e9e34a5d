"""How a session operation's answer and errors travel between processes, as plain JSON.

Two transports carry session operations: the session host's abstract unix socket (the processes of
one ``rewardhub serve``: its address and token travel in :data:`SOCKET_ENV` and :data:`TOKEN_ENV`) and, with ``execution: celery``, a task to the worker that holds the session
(:mod:`rewardhub.execution.celery_sessions`). Both speak this: a call's :class:`RunResult` as
:func:`answer_of` writes it, and an error as :func:`error_of` writes it, read back by
:func:`raised` as the same exception class, so a 410 ``session_lost`` reads the same whichever
process or machine held the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidRequest, Overloaded, RewardhubError
from ..sandbox.errors import SandboxError, SandboxUnavailable
from ..sandbox.verdicts import RunResult
from .errors import SessionBusy, SessionExpired, SessionLost, SessionNotFound

__all__ = [
    "MAX_MESSAGE",
    "SOCKET_ENV",
    "TOKEN_ENV",
    "TOKEN_HEADER",
    "answer_of",
    "error_of",
    "raised",
    "result_of",
    "socket_path",
]

SOCKET_ENV = "_REWARDHUB_SESSION_SOCKET"
"""The host's socket address, for the service's own processes (no ``REWARDHUB_`` prefix: not a setting)."""
TOKEN_ENV = "_REWARDHUB_SESSION_TOKEN"
TOKEN_HEADER = "x-session-host-token"
MAX_MESSAGE = 256 << 20

_ERRORS: dict[str, type[RewardhubError]] = {
    cls.error_type: cls
    for cls in (SessionNotFound, SessionLost, SessionExpired, SessionBusy, InvalidRequest, Overloaded)
    + (SandboxError, SandboxUnavailable)
}


def answer_of(result: RunResult) -> dict[str, Any]:
    """A call's result as JSON."""
    return {
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "elapsed_ms": result.elapsed_ms,
        "record": result.record,
        "details": result.details,
    }


def result_of(answer: Mapping[str, Any]) -> RunResult:
    """The :class:`RunResult` that :func:`answer_of` wrote."""
    return RunResult(
        answer["verdict"],
        answer["exit_code"],
        answer["stdout"],
        answer["stderr"],
        answer["elapsed_ms"],
        answer.get("record"),
        dict(answer.get("details") or {}),
    )


def error_of(exc: RewardhubError) -> dict[str, Any]:
    """An error as JSON: its type, message and (for 429) when to retry."""
    return {"type": exc.error_type, "message": exc.message, "retry_after": getattr(exc, "retry_after", None)}


def raised(error: Mapping[str, Any], fallback: str) -> RewardhubError:
    """The exception :func:`error_of` wrote (an unknown type is the sandbox's failure, ``fallback`` its message)."""
    cls = _ERRORS.get(str(error.get("type")), SandboxError)
    message = error.get("message") or fallback
    if cls is Overloaded:
        return Overloaded(message, retry_after=error.get("retry_after") or 1.0)
    return cls(message)


def socket_path(address: str) -> str:
    """The socket path of a host's ``address`` (``@`` stands for the abstract namespace's leading NUL)."""
    return "\0" + address[1:] if address.startswith("@") else address
