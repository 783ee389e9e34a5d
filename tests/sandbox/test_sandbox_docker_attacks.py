"""The adversarial suite, run again through the real Docker engine: every attack of
``test_sandbox_attacks.py``, unchanged, against one warm container instead of a bubblewrap sandbox.

The ``host`` check after each attack holds here too: the containers' processes are the host's
processes (no user namespace remapping), so a program left alive under a sandbox uid would show.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from docker_support import docker_pool, our_containers
from sandbox_support import SECRET, SECRET_NAME
from test_sandbox_attacks import *  # noqa: F403 (the battery itself: each test collected again, here)

from rewardhub.sandbox import SandboxPool

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("host")]


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    """One container for the whole battery, started with a secret in this process's environment."""
    import os

    os.environ[SECRET_NAME] = SECRET
    try:
        with docker_pool(concurrency=1) as sandbox_pool:
            yield sandbox_pool
    finally:
        os.environ.pop(SECRET_NAME, None)
    assert our_containers() == []
