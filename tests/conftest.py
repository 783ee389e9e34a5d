"""Shared fixtures: a real service (uvicorn + worker processes) with the misbehaving test plugins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rewardhub.server import EmbeddedServer

TESTS = Path(__file__).parent
PLUGIN = TESTS / "plugins" / "testing_verifiers.py"


@pytest.fixture(scope="session")
def plugin_file() -> Path:
    return PLUGIN


@pytest.fixture(scope="session")
def service_url(plugin_file: Path) -> Iterator[str]:
    """One running service for the API tests: 2 CPU workers, a short default timeout, small limits."""
    server = EmbeddedServer(
        workers=2,
        plugins=[str(plugin_file)],
        sample_timeout_s=5.0,
        worker_memory_mb=1024,
        max_request_bytes=2 * 1024 * 1024,
        max_samples_per_request=5000,
        get_reward_verifier="exact",
    )
    with server as url:
        yield url


@pytest.fixture(scope="session")
def http(service_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service_url, timeout=60) as client:
        yield client
