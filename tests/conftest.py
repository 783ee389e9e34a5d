"""Shared fixtures: a real service (uvicorn + worker processes) with the misbehaving test plugins.

It also draws the line between the two tiers of the suite. A test is ``integration`` when it
starts something: a service, a broker, a Celery worker, a training run. That is read from its
code and its fixtures' (what they call, :data:`STARTERS`), from its folder (:data:`INTEGRATION_DIRS`)
or from an explicit ``@pytest.mark.integration``. ``pytest -m "not integration"`` is the fast unit
tier for development; CI runs both.

CI runs the suite on three pytest-xdist workers (``-n 3 --dist loadfile``): each test file runs
whole on one worker, so a module's service starts once. Three workers on two cores, because much of
the suite waits (on brokers, workers, containers, timeouts) rather than computes: with two, the
cores sat idle 42% of the run. Two things keep the workers out of each other's way. Each worker's
sandboxes take user ids from a range of its own (:func:`_own_sandbox_uids`), so a test's "no
sandbox process is left on the host" sees only its own worker's programs. And the tests that share
something host-wide beyond that (``SHARED_FOLDERS``), or that would together hold more memory
and cores than the machine has (``SHARED_FILES``), run whole on one worker, one test at a time
(:func:`pytest_xdist_make_scheduler`). The longest of those units start first
(``LONG_UNITS``), so none of them is the run's tail: all three in tests/scheduling.py.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import cpu_profile
import httpx
import pytest
from scheduling import schedule_order, work_unit

from rewardhub.server import EmbeddedServer
from rewardhub.settings import Settings

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


def pytest_configure(config: pytest.Config) -> None:
    cpu_profile.install(config)  # REWARDHUB_CPU_PROFILE=FILE: each test's CPU, its processes' included


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """With ``--dist loadfile``, schedule by :func:`work_unit` instead of by file alone.

    (xdist's own ``xdist_group`` marks would say the same, but under pytest 9 the group suffix
    xdist 3.8 writes into a test's node id never reaches its scheduler.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedStateScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    # the units are handed out in the workers' collection order, which is schedule_order's
    # (pytest_collection_modifyitems), not by how many tests each holds
    config.option.loadscopereorder = False
    return SharedStateScheduling(config, log)


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
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # every worker collects in this order, and the scheduler reads the tests by their index in it
        order = {nodeid: i for i, nodeid in enumerate(schedule_order([item.nodeid for item in items]))}
        items.sort(key=lambda item: order[item.nodeid])


def _repository_root_on_sys_path() -> bool:
    """The suite runs with the repository root off ``sys.path`` (``python -P -m pytest``): there its
    ``verifiers/`` folder would shadow PrimeIntellect's installed ``verifiers`` package for every
    later test in the same worker (tests/integrations/test_prime.py)."""
    return any(entry and Path(entry).resolve() == TESTS.parent for entry in sys.path)


ROOT_ON_SYS_PATH_AT_START = _repository_root_on_sys_path()
"""``python -m pytest`` (a stage of scripts/gpu_check.sh, say) starts with the root there: only a
test that puts it there is at fault."""


def pytest_collection_finish(session: pytest.Session) -> None:
    if not ROOT_ON_SYS_PATH_AT_START and _repository_root_on_sys_path():
        raise pytest.UsageError("a test module put the repository root on sys.path as it was imported")


@pytest.fixture(autouse=True)
def _repository_root_stays_off_sys_path() -> Iterator[None]:
    yield
    assert ROOT_ON_SYS_PATH_AT_START or not _repository_root_on_sys_path(), "this test left the repository root on sys.path"


@pytest.fixture(scope="session")
def plugin_file() -> Path:
    return PLUGIN


TEST_SERVICE = {
    "workers": 2,
    "sample_timeout_s": 5.0,
    "worker_memory_mb": 1024,
    "max_request_bytes": 2 * 1024 * 1024,
    "max_samples_per_request": 5000,
    "get_reward_verifier": "exact",
}
"""The API tests' service: 2 CPU workers, a short default timeout, small limits (a memory hog meets
its 1 GB within a second)."""


@pytest.fixture(scope="session")
def service_url(plugin_file: Path) -> Iterator[str]:
    """One running service for the API tests (:data:`TEST_SERVICE`)."""
    with EmbeddedServer(plugins=[str(plugin_file)], **TEST_SERVICE) as url:
        yield url


@pytest.fixture(scope="session")
def http(service_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service_url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def roomy_http(plugin_file: Path) -> Iterator[httpx.Client]:
    """The API tests' service with the default worker memory (4 GB), for a module that scores a corpus
    over a hundred reasoning-gym families. On the shared service, whose workers have scored every earlier
    module's verifiers, building a family's dataset now and then met the 1 GB limit (an intermittent
    error, more often with more tests running beside it)."""
    settings = {**TEST_SERVICE, "worker_memory_mb": Settings.model_fields["worker_memory_mb"].default}
    with EmbeddedServer(plugins=[str(plugin_file)], **settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


@pytest.fixture(scope="session")
def composite_url() -> Iterator[str]:
    """A service whose /get_reward answers with OpenRLHF's composite (``openrlhf_support.COMPOSITE``)."""
    from openrlhf_support import COMPOSITE

    with EmbeddedServer(workers=1, get_reward_verifier=COMPOSITE) as url:
        yield url
