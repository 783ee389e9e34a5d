"""How the sandbox is set up on this machine: the ``sandbox`` section of the service's settings,
``REWARDHUB_SANDBOX_*`` environment variables.

It is a section of :class:`rewardhub.settings.Settings` (``sandbox.backend`` and the rest; ``rewardhub
settings`` lists them), built with the rest of the tree and handed to every worker process as it
starts, so a verifier running in any worker sees the same choice as the API process. Built alone
(``SandboxSettings()``), it reads the same variables.

The tree imports this section, so the sandbox never imports the tree: the tree hands the sandbox a
way to read its section (:func:`read_from`), and the sandbox's pools ask :func:`in_effect`. A
process that never loaded the tree (a script that only runs programs) gets its environment's section,
which is what the tree would have given it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["DEFAULT_PRELOAD", "SandboxSettings", "in_effect", "read_from"]

DEFAULT_PRELOAD = (
    "array",
    "bisect",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "queue",
    "random",
    "re",
    "statistics",
    "string",
    "threading",
    "typing",
    "numpy",
)
"""Imported once by each fork server: a program's ``import numpy`` then costs nothing."""


class SandboxSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REWARDHUB_SANDBOX_", extra="forbid", frozen=True)

    backend: Literal["bwrap", "docker", "unsafe"] = Field(
        "bwrap",
        description="bwrap: kernel namespaces here; docker: containers; unsafe: no isolation (explicit opt-in only).",
    )
    concurrency: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=1, description="Warm sandboxes per process; more work queues."
    )
    python: str = Field(default_factory=lambda: sys.executable, description="Interpreter that runs Python programs.")
    preload: Annotated[tuple[str, ...], NoDecode] = Field(
        DEFAULT_PRELOAD, description="Modules each fork server imports once."
    )
    scratch_mb: int = Field(256, ge=1, description="Size of each sandbox's private writable tmpfs.")
    recycle_after: int = Field(
        500, ge=1, description="Jobs a warm sandbox serves before it is replaced by a fresh one."
    )
    build_cache_mb: int = Field(
        256, ge=0, description="Memory for compiled submissions kept by source hash (0: compile every time)."
    )
    start_timeout_s: float = Field(30.0, gt=0, description="How long a new sandbox may take to report ready.")
    memory_limit: Literal["auto", "cgroup", "rlimit"] = Field(
        "auto", description="auto: a memory cgroup where the machine allows one, else RLIMIT_AS per process."
    )
    uid_base: int = Field(62000, ge=1000, description="First of the user ids given to sandboxes (one per sandbox).")
    uid_count: int = Field(1024, ge=1, description="How many user ids, from uid_base, sandboxes may take.")
    bwrap: str = Field("bwrap", description="The bubblewrap executable.")
    checker_include_dir: str | None = Field(
        None, description="Headers (testlib.h) compiled beside every C/C++ checker, from this host folder."
    )
    syscall_filter: bool = Field(
        True, description="Refuse the kernel interfaces programs have no use for (seccomp; see syscall_filter.py)."
    )
    seccomp_python: str = Field(
        "/usr/bin/python3", description="An interpreter with libseccomp's bindings (Debian: python3-seccomp)."
    )
    docker: str = Field("docker", description="The Docker client executable.")
    docker_image: str = Field(
        "rewardhub-sandbox-runtime:latest", description="Image with the interpreters (see deploy/sandbox)."
    )
    docker_cpus: float = Field(1.0, gt=0, description="CPUs each sandbox container may use.")
    docker_socket_dir: str = Field(
        "/tmp/rewardhub-sandbox",
        description="Host folder for the containers' control sockets (bind-mounted into them).",
    )

    @field_validator("preload", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value


_source: Callable[[], SandboxSettings] | None = None


def read_from(source: Callable[[], SandboxSettings]) -> None:
    """Take this process's sandbox section from ``source`` from now on: :mod:`rewardhub.settings`
    passes the section of the tree this process was handed (``rewardhub.settings.current``)."""
    global _source
    _source = source


def in_effect() -> SandboxSettings:
    """This process's sandbox section: from the source the settings tree passed down, else the
    environment's (``REWARDHUB_SANDBOX_*``)."""
    if _source is not None:
        return _source()
    return _from_environment(
        tuple(sorted(item for item in os.environ.items() if item[0].upper().startswith("REWARDHUB_SANDBOX_")))
    )


@functools.lru_cache(maxsize=8)
def _from_environment(variables: tuple[tuple[str, str], ...]) -> SandboxSettings:
    """The section these variables give (built once per set of them: a pool is looked up per run)."""
    return SandboxSettings()
