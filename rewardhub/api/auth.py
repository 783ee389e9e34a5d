"""API keys: bearer tokens compared in constant time, with an optional per-key rate limit.

No keys configured means the service is open, which the CLI only allows on a loopback bind.
A wrong key and a missing key get the same 401, so the answer never tells which keys exist.

Whose a request is (the owner of the sessions and jobs it makes) is decided here and nowhere
else: :meth:`Authenticator.admit` records, on the request, a digest of the very token it checked,
and :func:`authenticated_owner` reads only that. A second header (``Authorization: Junk x`` beside
a valid ``X-API-Key``, a second ``Authorization``) names no one. In an open service nothing is
checked, and the presented token is a label that keeps one caller's sessions apart from
another's, not a wall.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from dataclasses import dataclass

from fastapi import Request

from rewardhub.errors import Overloaded, Unauthorized
from rewardhub.sessions.manager import key_owner

__all__ = ["Authenticator", "authenticated_owner"]

_OWNER = "rewardhub_owner"
"""The attribute of ``request.state`` that :meth:`Authenticator.admit` sets."""


@dataclass
class _Bucket:
    tokens: float
    updated: float


class Authenticator:
    def __init__(self, keys: list[str], rate_per_s: float | None = None) -> None:
        # Compare digests, so the comparison time does not depend on key length either.
        self._digests = [hashlib.sha256(key.encode()).digest() for key in keys]
        self.rate_per_s = rate_per_s
        self._buckets: dict[bytes, _Bucket] = {}

    @property
    def enabled(self) -> bool:
        return bool(self._digests)

    def __call__(self, request: Request) -> None:
        """Admit a request by its ``Authorization: Bearer`` key."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        self.admit(request, token, scheme.lower() == "bearer")

    def admit(self, request: Request, token: str, well_formed: bool = True) -> None:
        """Check ``token`` (where keys are configured), then record it as the request's owner."""
        token = token.strip() if well_formed else ""
        if self.enabled:
            self.check(token, well_formed)
        setattr(request.state, _OWNER, key_owner(token))

    def admit_browser(self, request: Request) -> None:
        """Admit by Bearer, or by HTTP Basic with the key as the password (any user name): what a
        browser sends after a ``WWW-Authenticate: Basic`` challenge (the operator page, the API docs)."""
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            self(request)
            return
        try:
            _, _, password = base64.b64decode(credentials.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthorized("malformed Basic credentials") from None
        self.admit(request, password)

    def check(self, token: str, well_formed: bool = True) -> None:
        """Accept ``token`` if it is one of the keys (the operator page also takes it from Basic auth)."""
        digest = hashlib.sha256(token.strip().encode()).digest()
        matched = False
        for known in self._digests:  # no early exit: every key is compared every time
            matched |= hmac.compare_digest(digest, known)
        if not well_formed or not matched:
            raise Unauthorized("missing or invalid API key")
        if self.rate_per_s is not None:
            self._take(digest)

    def _take(self, digest: bytes) -> None:
        now = time.monotonic()
        burst = max(1.0, self.rate_per_s * 2)  # type: ignore[operator]
        bucket = self._buckets.setdefault(digest, _Bucket(burst, now))
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * self.rate_per_s)  # type: ignore[operator]
        bucket.updated = now
        if bucket.tokens < 1:
            raise Overloaded("rate limit exceeded for this API key", retry_after=(1 - bucket.tokens) / self.rate_per_s)  # type: ignore[operator]
        bucket.tokens -= 1


def authenticated_owner(request: Request) -> str:
    """The owner :meth:`Authenticator.admit` recorded; a route that admitted no one gets a 401
    rather than an owner taken from some header."""
    owner = getattr(request.state, _OWNER, None)
    if owner is None:
        raise Unauthorized("missing or invalid API key")
    return owner
