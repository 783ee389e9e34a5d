"""``rewardhub serve --api-workers N`` as a user starts it, for the tests that need several API
processes on one port (``tests/api/test_api_workers.py``, ``tests/jobs/test_expired_everywhere.py``).

Which process takes a connection is the kernel's choice, so :func:`fresh` opens a new connection
per request, and a test that must reach every process retries until each has answered (each
answer names its process in ``X-Rewardhub-Pid``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

from rewardhub.server import free_port

ATTEMPTS = 400
"""Fresh connections a test may open to reach every process."""


@contextmanager
def api_workers(here: Path, n: int, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``rewardhub serve --api-workers n *args``, until all ``n`` processes answer ``/readyz``; its URL.

    ``env``: ``REWARDHUB_*`` settings on top of this environment's. The log is ``here/serve.log``.
    """
    port = free_port()
    log = (here / "serve.log").open("w+")
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port), *args, "--api-workers", str(n)]
    environ = {**os.environ, "REWARDHUB_LOG_LEVEL": "warning", **(env or {})}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environ)
    url = f"http://127.0.0.1:{port}"
    try:
        ready: set[int] = set()
        deadline = time.monotonic() + 180
        while len(ready) < n:
            assert process.poll() is None and time.monotonic() < deadline, _tail(log)
            try:
                response = fresh("GET", f"{url}/readyz")
                if response.status_code == 200:
                    ready.add(int(response.headers["X-Rewardhub-Pid"]))
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()  # uvicorn's supervisor stops its workers, and they their pools
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def fresh(method: str, url: str, **kwargs: object) -> httpx.Response:
    """One request on a connection of its own: the kernel picks the process that answers it."""
    with httpx.Client(timeout=30) as client:
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def _tail(log: IO[str]) -> str:
    log.seek(0)
    return "rewardhub serve did not start; its log ends with:\n" + log.read()[-2000:]
