"""The routes trainers call thousands of times a second, answered without FastAPI's router.

OpenRLHF's remote reward sends one ``POST /get_reward`` per sample, a thousand at a time; verl
and TRL post batches to ``/v1/score``. For a one-sample request FastAPI's router (matching the
path against every route in turn), its dependency solving and its exception middleware cost
more CPU than scoring the sample (``bench/overhead.py``). :class:`HotRoutes` sits just inside
our own middlewares (request id, run tag, metrics), so those still see every request, and sends
``POST`` on these paths straight to the same handler functions FastAPI has registered for them
(``rewardhub.api.routes.score.score``, ``rewardhub.api.compat.openrlhf.get_reward``), after the same key check, with errors answered by the same code
(``rewardhub.api.errors``). Everything else, including other methods on these paths (405), goes
on to FastAPI, which also keeps describing these routes in its OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from rewardhub.api.compat.openrlhf import get_reward
from rewardhub.api.errors import rewardhub_error_response, unexpected_error_response
from rewardhub.api.routes.score import score
from rewardhub.api.service import Service
from rewardhub.errors import RewardhubError

__all__ = ["HOT_ROUTES", "HotRoutes"]

Handler = Callable[[Request, Service], Awaitable[Response]]

HOT_ROUTES: dict[str, Handler] = {"/v1/score": score, "/get_reward": get_reward}


@dataclass(frozen=True)
class _RouteLabel:
    """What FastAPI puts in ``scope["route"]`` as far as MetricsMiddleware reads it: the template."""

    path: str


class HotRoutes:
    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service
        self.routes = {path: (handler, _RouteLabel(path)) for path, handler in HOT_ROUTES.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hot = self.routes.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if hot is None:
            await self.app(scope, receive, send)
            return
        handler, route = hot
        scope["route"] = route
        request = Request(scope, receive)
        try:
            self.service.auth(request)
            response = await handler(request, self.service)
        except RewardhubError as exc:
            response = rewardhub_error_response(request, exc)
        except Exception as exc:  # noqa: BLE001 - the same 500 as every other route gives
            response = unexpected_error_response(request, exc)
        await response(scope, receive, send)
