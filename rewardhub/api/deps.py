"""The routes' typed dependencies, and who the caller is: what every router shares, no router owns.

Each route names what it needs by type (``service: ServiceDep``, ``sessions: SessionsDep``), so
grep finds where a handler's service comes from, and a test app hands in its own
:class:`~rewardhub.api.service.Service` (or a stand-in with the fields its routes read) as
``app.state.service``, the one thing a route reads off the app.

Dependencies are coroutines on purpose: FastAPI runs plain functions in a thread pool, which
costs more than the whole of a single-sample exact-match request.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from rewardhub.api.auth import authenticated_owner
from rewardhub.api.service import Service
from rewardhub.sessions.protocol import Sessions

__all__ = [
    "ServiceDep",
    "SessionsDep",
    "caller_grant",
    "caller_owner",
    "get_service",
    "get_sessions",
    "require_browser_key",
    "require_key",
    "sessions_of",
]


async def get_service(request: Request) -> Service:
    return request.app.state.service


def sessions_of(request: Request) -> Sessions:
    """The service's sessions, for a helper that holds the request rather than a dependency."""
    return request.app.state.service.sessions


async def get_sessions(request: Request) -> Sessions:
    return sessions_of(request)


async def require_key(request: Request) -> None:
    """Admit by ``Authorization: Bearer`` (:class:`~rewardhub.api.auth.Authenticator`)."""
    request.app.state.service.auth(request)


async def require_browser_key(request: Request) -> None:
    """Admit by Bearer, or by the key as an HTTP Basic password: pages a browser opens (the docs)."""
    request.app.state.service.auth.admit_browser(request)


ServiceDep = Annotated[Service, Depends(get_service)]
SessionsDep = Annotated[Sessions, Depends(get_sessions)]


def caller_owner(request: Request) -> str:
    """Who owns what this request makes: a digest of the API key its route authenticated (Bearer,
    or ORS's ``X-API-Key``), never of another header it carries (:mod:`rewardhub.api.auth`)."""
    return authenticated_owner(request)


def caller_grant(request: Request) -> dict[str, Any] | None:
    """What a sample this request has judged in a session carries: the caller, the session host and
    a ticket (:func:`rewardhub.sessions.grants.grant`); None where no verifier can reach the sessions."""
    return sessions_of(request).grant(caller_owner(request))
