"""Shared fixtures: a real service (uvicorn + worker processes) with the misbehaving test plugins.

It also draws the line between the two tiers of the suite. A test is ``integration`` when it
starts something: a service, a broker, a Celery worker, a training run. That is read from its
code and its fixtures' (what they call, :data:`STARTERS`), from its folder (:data:`INTEGRATION_DIRS`)
or from an explicit ``@pytest.mark.integration``. ``pytest -m "not integration"`` is the fast unit
tier for development; CI runs both.

CI runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``). Two things keep the
workers out of each other's way. Each worker's sandboxes take user ids from a range of its own
(:func:`_own_sandbox_uids`), so a test's "no sandbox process is left on the host" sees only its own
worker's programs. Tests that share something host-wide beyond that run on one worker, one at a
time, by :data:`SHARED_BY_FOLDER` and :data:`SHARED_BY_MARK`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import httpx
import pytest

from rewardhub.server import EmbeddedServer

TESTS = Path(__file__).parent
PLUGIN = TESTS / "plugins" / "testing_verifiers.py"

STARTERS = (
    "EmbeddedServer(",
    "ServiceProcess(",
    "ServiceThread(",
    "CeleryService(",
    "PrivateRedis(",
    "Trainer(",
    "api_workers(",
)
"""What a fixture's code calls when it starts a service, a broker, a worker or a training run."""

INTEGRATION_DIRS = ("celery", "contract", "deploy")
"""Folders whose every test runs against real processes (brokers, workers, upstream trainers)."""


SHARED_BY_FOLDER = {
    "celery": "brokers",  # queues and workers on the shared Redis and RabbitMQ, broker restarts
    "jobs": "brokers",
    "deploy": "docker",  # the compose project and its images
    "sandbox": "sandbox",  # the attack battery's traces in /tmp, /dev/shm and /; the unsafe backend's folders
}
"""Top folders of tests/ whose tests share host-wide state, and the one xdist group each runs in."""

SHARED_BY_MARK = {"docker": "docker"}
"""Marks whose tests share host-wide state (the Docker engine's containers), and their xdist group."""

SANDBOX_UID_BASE = 62000
"""``SandboxSettings.uid_base``'s default: worker N of an xdist run starts N ranges above it."""


def _own_sandbox_uids() -> None:
    """Give this xdist worker's sandboxes a range of user ids no other worker uses.

    The services and pools a test starts read ``REWARDHUB_SANDBOX_UID_BASE`` (in this process or
    inherited by the processes it starts), and the host checks read the same settings.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and "REWARDHUB_SANDBOX_UID_BASE" not in os.environ:
        os.environ["REWARDHUB_SANDBOX_UID_BASE"] = str(SANDBOX_UID_BASE + 2048 * int(worker[2:]))


_own_sandbox_uids()


def _shared_group(item: pytest.Item, top: str) -> str | None:
    for mark, group in SHARED_BY_MARK.items():
        if item.get_closest_marker(mark) is not None:
            return group
    return SHARED_BY_FOLDER.get(top)


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
        starts = _starts_something(getattr(item, "function", None)) or any(
            _starts_something(d[-1].func) for d in defs if d
        )
        if parts[0] in INTEGRATION_DIRS or starts:
            item.add_marker(pytest.mark.integration)
        group = _shared_group(item, parts[0])
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


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
