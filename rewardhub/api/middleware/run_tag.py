"""Run tags: which training run a scored sample belongs to, for the operator page's per-run figures.

A caller tags its requests with the ``X-Rewardhub-Run`` header (any endpoint) or the ``run`` field
of a ``/v1/score`` or ``/v1/jobs`` body (the field wins). The header is made current for the
request by :class:`RunTagMiddleware`; the score pipeline reads it when it admits the request, so a
job scored later in the background still counts under the run that submitted it.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

from starlette.types import ASGIApp, Receive, Scope, Send

from rewardhub.errors import BadRequest

__all__ = ["HEADER", "RunTagMiddleware", "accept_run", "current_run"]

HEADER = "x-rewardhub-run"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:/@+-]{1,128}")
_run: ContextVar[str | None] = ContextVar("rewardhub_run", default=None)


def current_run() -> str | None:
    return _run.get()


def accept_run(value: str | None) -> str | None:
    """A run tag is short and plain (it is a label on a page and a key in a store), else 400."""
    if value is None or value == "":
        return None
    if not _WELL_FORMED.fullmatch(value):
        raise BadRequest(
            "run tag must be 1-128 characters of letters, digits and ._:/@+-",
            detail={"run": value[:200]},
        )
    return value


class RunTagMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = dict(scope.get("headers") or []).get(HEADER.encode())
        token = _run.set(raw.decode("latin-1") if raw is not None else None)
        try:
            await self.app(scope, receive, send)
        finally:
            _run.reset(token)
