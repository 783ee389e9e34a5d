"""What a cache entry holds, and the checks before one is served.

An entry is JSON: the address it was stored under, the result, and a MAC of both (HMAC-SHA256
with the ``cache_secret`` setting; a plain SHA-256 without one). Reading it back checks, in
order, that it parses, that its MAC is right, that it was stored under the address asked for,
that the result parses as a :class:`~rewardhub.types.Result`, that its verdict key is the one
expected and its status one that may be cached. Any failure is :class:`CorruptEntry`: the
caller logs it, drops the entry and scores the sample. A bit flip, a truncated write, an entry
copied under another address or written by a process without the secret is never served.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Collection, Mapping

from pydantic import ValidationError

from rewardhub.types import Result

__all__ = ["CorruptEntry", "decode_entry", "encode_entry"]


class CorruptEntry(ValueError):
    """A stored entry that must not be served; the message says which check it failed."""


def _mac(key: str, result_json: str, secret: str | None) -> str:
    message = f"{key}\n{result_json}".encode()
    if secret:
        return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return hashlib.sha256(message).hexdigest()


def encode_entry(key: str, result: Result, secret: str | None = None) -> bytes:
    """The entry for ``result`` at ``key``; the result is stored without its sample's id."""
    result_json = result.model_copy(update={"id": None, "cached": False}).model_dump_json()
    return json.dumps({"key": key, "result": result_json, "mac": _mac(key, result_json, secret)}).encode()


def decode_entry(
    key: str,
    data: bytes,
    verdict_key: Mapping[str, str],
    statuses: Collection[str],
    secret: str | None = None,
) -> Result:
    """The stored result, or :class:`CorruptEntry` naming the check that failed."""
    try:
        entry = json.loads(data)
        stored_key, result_json, mac = entry["key"], entry["result"], entry["mac"]
    except (ValueError, TypeError, KeyError) as exc:
        raise CorruptEntry(f"unreadable entry ({type(exc).__name__})") from None
    if not isinstance(result_json, str) or not isinstance(mac, str) or not isinstance(stored_key, str):
        raise CorruptEntry("entry fields of the wrong type")
    if not hmac.compare_digest(mac, _mac(stored_key, result_json, secret)):
        raise CorruptEntry("MAC mismatch (altered, or written without this service's cache_secret)")
    if stored_key != key:
        raise CorruptEntry(f"stored under another address ({stored_key[:60]})")
    try:
        result = Result.model_validate_json(result_json)
    except ValidationError as exc:
        raise CorruptEntry(f"not a result: {exc.errors(include_url=False)[0]['msg']}") from None
    if result.details.get("verdict_key") != dict(verdict_key):
        raise CorruptEntry(f"verdict key {result.details.get('verdict_key')} is not {dict(verdict_key)}")
    if result.status not in statuses:
        raise CorruptEntry(f"status {result.status!r} is not cached")
    return result
