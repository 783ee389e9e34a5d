"""One warm sandbox pool for the sandbox tests, and the host check every attack ends with.

The pool is started with a secret in this process's environment, so the tests that read the
program's environment prove it did not get there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from sandbox_support import SECRET, SECRET_NAME, SETTINGS, host_traces, sandbox_processes

from rewardhub.sandbox import SandboxPool, SandboxUnavailable


@pytest.fixture(scope="session")
def pool() -> Iterator[SandboxPool]:
    os.environ[SECRET_NAME] = SECRET
    try:
        sandbox_pool = SandboxPool(SETTINGS)
    except SandboxUnavailable as exc:
        pytest.skip(f"no bubblewrap on this machine: {exc.message}")
    yield sandbox_pool
    sandbox_pool.close()
    os.environ.pop(SECRET_NAME, None)


@pytest.fixture
def host() -> Iterator[None]:
    """After the test: no program process left anywhere on the host, no file of ours on it."""
    before = host_traces()
    yield
    deadline = time.monotonic() + 3.0
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes() == []
    assert host_traces() - before == set()
