"""The socket-family battery of ``test_sandbox_socket_families.py``, run again through the real
Docker engine: the same policy is the container's seccomp profile, replacing Docker's default
(which leaves every family but AF_VSOCK open). Skipped, with the reason, where no engine runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from docker_support import docker_pool, our_containers
from sandbox_support import SECRET, SECRET_NAME
from test_sandbox_socket_families import *  # noqa: F403 (the battery itself: each test collected again, here)
from test_sandbox_socket_families import SOCK_DGRAM, SOCKET, attempts

from rewardhub.sandbox import SandboxPool

pytestmark = [pytest.mark.docker]


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    import os

    os.environ[SECRET_NAME] = SECRET
    try:
        with docker_pool(concurrency=1) as sandbox_pool:
            yield sandbox_pool
    finally:
        os.environ.pop(SECRET_NAME, None)
    assert our_containers() == []


@pytest.fixture(scope="module")
def unfiltered_pool() -> Iterator[SandboxPool]:
    """A container on Docker's own default profile (``syscall_filter: false`` passes none of ours)."""
    with docker_pool(concurrency=1, syscall_filter=False) as sandbox_pool:
        yield sandbox_pool


@pytest.mark.usefixtures("host")
def test_without_the_filter_vsock_and_netlink_sockets_are_made(unfiltered_pool):
    """Docker's default profile refuses AF_VSOCK alone (recent engines): netlink, and every other
    family the kernel has, stays open to a container without our profile."""
    answers = attempts(unfiltered_pool, {"AF_NETLINK": (SOCKET, 16, SOCK_DGRAM)})
    assert answers["AF_NETLINK"][0] >= 0
