"""Request ids: one per HTTP request, carried to the workers and written in every log line.

The caller may send ``X-Request-ID`` (a trainer that wants to find its step in our logs); a
well-formed one is kept, anything else is replaced by a fresh id. The id is made current for
the whole request (``rewardhub.logging``), so the executor puts it in the Celery payload and
the worker logs under it too, and it is echoed in the ``X-Request-ID`` response header.

Every response also names the API process that gave it (``X-Rewardhub-Pid``): with
``--api-workers N`` or replicas, a job runs in the process that accepted it and its polls may be
answered by any other, from the shared job store.
"""

from __future__ import annotations

import os
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rewardhub.logging import current_request_id, new_request_id, request_context

__all__ = ["HEADER", "PID_HEADER", "RequestIdMiddleware", "accept_request_id"]

HEADER = "x-request-id"
PID_HEADER = "x-rewardhub-pid"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def accept_request_id(value: str | None) -> str:
    """The caller's id when it is short and plain (it ends up in logs), else a new one."""
    if value and _WELL_FORMED.fullmatch(value):
        return value
    return new_request_id()


class RequestIdMiddleware:
    """Pure ASGI middleware, so the id is current in the route handler and in tasks it starts."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or current_request_id() is not None:  # not HTTP, or already set outside
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw = headers.get(HEADER.encode())
        request_id = accept_request_id(raw.decode("latin-1") if raw else None)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (HEADER.encode(), request_id.encode()),
                    (PID_HEADER.encode(), str(os.getpid()).encode()),
                ]
            await send(message)

        with request_context(request_id):
            await self.app(scope, receive, send_with_id)
