"""Several API processes, one page: each process's figures add up, whichever process answers.

Two layouts: two ``rewardhub serve`` processes pointed at one sqlite store (what two services or
``--api-workers`` share on one host), and the deploy files' own ``uvicorn --workers 2`` with a
Prometheus multiprocess directory, where the store is a file in that directory without any setting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import stats, wait_for

from rewardhub.launcher import ServiceProcess, free_port

SAMPLE = {"response": "\\boxed{1}", "reference": "1"}


def _post(url: str, n: int, run: str, cache: bool | None = None) -> None:
    # A new connection per request, so a multi-process server spreads them over its processes.
    body = {"verifier": "math", "samples": [SAMPLE], **({"cache": cache} if cache is not None else {})}
    for _ in range(n):
        answer = httpx.post(f"{url}/v1/score", json=body, headers={"X-Rewardhub-Run": run})
        assert answer.status_code == 200


def test_two_services_on_one_sqlite_store_show_the_sum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """They share a sqlite reward cache too: the one verdict is judged once, each service counts its
    own hits, and the page shows the store's one entry, not one per service."""
    monkeypatch.setenv("REWARDHUB_UI_STORE", f"sqlite:///{tmp_path / 'ui.db'}")
    monkeypatch.setenv("REWARDHUB_CACHE_BACKEND", f"sqlite:///{tmp_path / 'cache.sqlite3'}")
    with ServiceProcess(workers=1) as first, ServiceProcess(workers=1) as second:
        _post(first, 3, "shared", cache=True)
        _post(second, 2, "shared", cache=True)
        for url in (first, second):
            with httpx.Client(base_url=url) as client:
                figures = wait_for(lambda c=client: stats(c), lambda s: s["total"] == 5 and s["cache"]["lookups"] == 5)
                assert figures["processes"] == 2
                assert figures["verifiers"]["math"]["samples"] == 5
                assert figures["runs"]["shared"]["status"]["ok"] == 5
                assert len(client.get("/ui/api/samples").json()["samples"]) == 5
                cache = figures["cache"]
                assert (cache["hits"], cache["misses"], cache["entries"]) == (4, 1, 1)
                assert cache["backends"] == [f"sqlite:///{tmp_path / 'cache.sqlite3'}"]


def test_uvicorn_workers_with_a_prometheus_multiprocess_dir_share_the_page(tmp_path: Path):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    port = free_port()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "REWARDHUB_WORKERS": "1"}
    env.pop("REWARDHUB_UI_STORE", None)
    command = [sys.executable, "-m", "uvicorn", "--factory", "rewardhub.api.app:create_app", "--port", str(port)]
    server = subprocess.Popen([*command, "--workers", "2", "--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        ready = wait_for(lambda: _ready(url), bool, timeout_s=90)
        assert ready, "uvicorn did not start"
        _post(url, 30, "multi")
        with httpx.Client(base_url=url) as client:
            figures = wait_for(lambda: stats(client), lambda s: s["total"] == 30 and s["processes"] == 2)
        assert (figures["total"], figures["processes"]) == (30, 2)
        assert figures["runs"]["multi"]["samples"] == 30
        assert (metrics_dir / "rewardhub-ui.sqlite3").exists()
        # the page's file sits beside Prometheus' own files without being read as one of them
        assert all(httpx.get(f"{url}/metrics", timeout=10).status_code == 200 for _ in range(4))
    finally:
        server.terminate()
        server.wait(timeout=60)


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        time.sleep(0.2)
        return False
