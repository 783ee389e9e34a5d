"""Shared fixtures: a real service (uvicorn + worker processes) with the misbehaving test plugins.

It also draws the line between the two tiers of the suite. A test is ``integration`` when it
starts something: a service, a broker, a Celery worker, a training run. That is read from its
code and its fixtures' (what they call, :data:`STARTERS`), from its folder (:data:`INTEGRATION_DIRS`)
or from an explicit ``@pytest.mark.integration``. ``pytest -m "not integration"`` is the fast unit
tier for development; CI runs both.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import httpx
import pytest

from rewardhub.server import EmbeddedServer

TESTS = Path(__file__).parent
PLUGIN = TESTS / "plugins" / "testing_verifiers.py"

STARTERS = ("EmbeddedServer(", "ServiceProcess(", "ServiceThread(", "CeleryService(", "PrivateRedis(", "Trainer(", "api_workers(")
"""What a fixture's code calls when it starts a service, a broker, a worker or a training run."""

INTEGRATION_DIRS = ("celery", "contract", "deploy")
"""Folders whose every test runs against real processes (brokers, workers, upstream trainers)."""


@cache
def _starts_something(func: object) -> bool:
    try:
        source = inspect.getsource(func)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return False
    return any(starter in source for starter in STARTERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).relative_to(TESTS).parts
        fixtures = getattr(item, "_fixtureinfo", None)
        defs = fixtures.name2fixturedefs.values() if fixtures is not None else ()
        starts = _starts_something(getattr(item, "function", None)) or any(_starts_something(d[-1].func) for d in defs if d)
        if parts[0] in INTEGRATION_DIRS or starts:
            item.add_marker(pytest.mark.integration)


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


@pytest.fixture(scope="session")
def composite_url() -> Iterator[str]:
    """A service whose /get_reward answers with OpenRLHF's composite (``openrlhf_support.COMPOSITE``)."""
    from openrlhf_support import COMPOSITE

    with EmbeddedServer(workers=1, get_reward_verifier=COMPOSITE) as url:
        yield url
