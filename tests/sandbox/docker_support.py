"""The real Docker engine for the ``docker`` tests: whether it is here, and a warm pool on it.

The tests need a running engine (``.ci/run`` starts one) and the runtime image, which
``scripts/build_sandbox_image.sh`` builds on the first docker test that finds it missing
(:mod:`image_builds`); without an engine, or when the build fails, they skip, saying which and how
to get it, so a machine without Docker still runs the rest of the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import pytest
from image_builds import image_missing, runtime_tier

from rewardhub.sandbox import SandboxPool, SandboxSettings

IMAGE = os.environ.get("REWARDHUB_SANDBOX_DOCKER_IMAGE", "rewardhub-sandbox-runtime:latest")


@lru_cache(maxsize=1)
def docker_missing() -> str | None:
    """Why the real engine cannot be used here, or None when it can."""
    if shutil.which("docker") is None:
        return "no docker client (scripts/install_system_deps.sh installs docker.io)"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=30)
        if info.returncode != 0:
            return "no Docker engine answers (.ci/run starts dockerd --bridge=none --iptables=false ...)"
        return image_missing(IMAGE, "--tier", runtime_tier())
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the docker client failed: {exc}"


def require_docker() -> None:
    reason = docker_missing()
    if reason is not None:
        pytest.skip(reason)


def our_containers() -> list[str]:
    """Names of the sandbox containers alive on this engine (there must be none between tests)."""
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", "name=rewardhub-sandbox-", "--format", "{{.Names}}"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return listed.stdout.split()


@contextmanager
def docker_pool(**overrides: object) -> Iterator[SandboxPool]:
    """A pool on the real engine, removed (containers and socket folder) when the block ends."""
    require_docker()
    sockets = tempfile.mkdtemp(prefix="rh-", dir="/tmp")  # Unix socket paths are short (108 bytes)
    settings = {"backend": "docker", "docker_image": IMAGE, "docker_socket_dir": sockets, "concurrency": 1}
    settings["preload"] = ("json", "math", "numpy")
    pool = SandboxPool(SandboxSettings(**{**settings, **overrides}))
    try:
        yield pool
    finally:
        pool.close()
        shutil.rmtree(sockets, ignore_errors=True)
