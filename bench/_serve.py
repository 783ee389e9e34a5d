"""Start ``rewardhub serve`` in a subprocess for a benchmark and wait until it is ready."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from rewardhub.server import free_port

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["start_service"]


def start_service(
    *serve_args: str, env: dict[str, str] | None = None, timeout_s: float = 60.0, ready: str = "/readyz"
) -> tuple[subprocess.Popen, str]:
    """``rewardhub serve --port <free> *serve_args``; returns the process and its URL once ``ready`` is 200
    (``/healthz`` for a service that is up without being ready for every kind: a Celery service with
    only some of its workers)."""
    port = free_port()
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port), *serve_args]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + ready).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("the service did not become ready")
