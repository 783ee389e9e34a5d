"""API keys: bearer tokens compared in constant time, with an optional per-key rate limit.

No keys configured means the service is open, which the CLI only allows on a loopback bind.
A wrong key and a missing key get the same 401, so the answer never tells which keys exist.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

from fastapi import Request

from rewardhub.errors import Overloaded, Unauthorized

__all__ = ["Authenticator"]


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
        if not self.enabled:
            return
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        self.check(token, scheme.lower() == "bearer")

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
