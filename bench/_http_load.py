"""A load generator that costs the machine little: pre-encoded HTTP/1.1 requests over asyncio streams.

The benches run client and server on the same cores. A full HTTP client (aiohttp, httpx) spends
about 0.4 ms of CPU per request on this machine, as much as the server it measures, so on 2 cores
it would mostly measure itself. Load generators are written lean for that reason (wrk, h2load);
this one is the same idea in a page of Python: every request is encoded before the clock starts,
each one opens its own connection (as OpenRLHF's ``requests.post`` does), sends its bytes and
reads the answer until the server closes, on uvloop when it is installed.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlsplit

__all__ = ["post_all"]


def _encode(host: str, path: str, body: Any) -> bytes:
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + payload


async def _post(host: str, port: int, request: bytes) -> Any:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request)
        raw = await reader.read(-1)  # ``Connection: close``: the answer ends when the server closes
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status != 200:
        raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
    return json.loads(body)


def post_all(url: str, path: str, bodies: list[Any]) -> tuple[float, list[Any]]:
    """Send every body at once (all concurrent); returns requests/s and the decoded answers in order."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    requests = [_encode(host, path, body) for body in bodies]

    async def run() -> tuple[float, list[Any]]:
        started = time.perf_counter()
        answers = await asyncio.gather(*(_post(host, port, request) for request in requests))
        return len(requests) / (time.perf_counter() - started), list(answers)

    try:
        import uvloop

        return uvloop.run(run())
    except ImportError:
        return asyncio.run(run())
