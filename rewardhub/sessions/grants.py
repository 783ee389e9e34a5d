"""Grants: what lets a verifier judge one caller's sessions, and nothing else, for a while.

A verifier that judges a session (``session_tests``, or ``code`` with a ``session_id``) runs in a
pool worker, forked from a fork server that may have started before the session host existed, so it
cannot count on the environment: the service hands it a :func:`grant` in the sample instead, the
host's address and a ticket (an HMAC of the caller and an expiry under the host's token) that the
host checks with :func:`granted_owner`.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidRequest

__all__ = ["GRANT_S", "grant", "granted_owner"]

GRANT_S = 6 * 3600.0
"""How long a grant judges: a job may wait in the queue, a replayed old sample must not judge today."""


def _ticket(token: str, owner: str, expires: float) -> str:
    return hmac.new(token.encode(), f"{owner}|{expires!r}".encode(), hashlib.sha256).hexdigest()


def grant(address: str, token: str, owner: str, now: float | None = None) -> dict[str, Any]:
    """What a verifier needs to judge ``owner``'s sessions on the host at ``address``, for a while."""
    expires = round((time.time() if now is None else now) + GRANT_S, 3)
    return {"owner": owner, "host": address, "expires": expires, "ticket": _ticket(token, owner, expires)}


def granted_owner(token: str, given: Mapping[str, Any], now: float | None = None) -> str:
    """The caller a grant names, when the host whose token is ``token`` wrote it and it has not expired."""
    owner, expires, ticket = str(given["owner"]), float(given["expires"]), str(given["ticket"])
    if not hmac.compare_digest(_ticket(token, owner, expires), ticket):
        raise InvalidRequest("the sample's session grant is not this service's (another run of it made it?)")
    if (time.time() if now is None else now) > expires:
        raise InvalidRequest("the sample's session grant expired: score it again")
    return owner
