"""The unsafe backend: the same fork server, with no walls around it.

For development machines without bubblewrap or Docker, and only when chosen explicitly
(``REWARDHUB_SANDBOX_BACKEND=unsafe``). Programs still get rlimits, a wall clock, an empty
environment, a scratch folder as their working directory and, when the service runs as root,
their own uid and a memory cgroup. They do **not** get a network, pid or mount namespace: they can
reach the network, see the host's processes, and read and write wherever their uid may.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import tempfile
from typing import Any

from rewardhub.sandbox.cgroups import SandboxCgroups
from rewardhub.sandbox.isolation import (
    CGROUP_PREFIX,
    DRIVER_DIR,
    PROGRAM_ENV,
    Isolation,
    UidLease,
    cgroup_wrapper,
    kill_uid,
    spawn,
)
from rewardhub.sandbox.limits import SANDBOX_OWN_TASKS, Limits
from rewardhub.sandbox.settings import SandboxSettings

__all__ = ["UnsafeIsolation"]

log = logging.getLogger(__name__)


class UnsafeIsolation(Isolation):
    backend = "unsafe"
    check_ipc = False

    def __init__(self, settings: SandboxSettings, lease: UidLease) -> None:
        super().__init__(settings, lease)
        log.warning("sandbox backend 'unsafe': submitted code runs WITHOUT isolation")
        self.root = os.geteuid() == 0
        if not self.root:
            self.program_uid = os.getuid()
            self.shares_host_uid = True
        self.kill_scope = "uid" if self.root else "session"
        self.directory = tempfile.mkdtemp(prefix="rewardhub-unsafe-")
        os.chmod(self.directory, 0o1777)
        self.scratch = (self.directory,)
        wants_cgroup = self.root and settings.memory_limit != "rlimit"
        self.cgroups = SandboxCgroups.create(f"{CGROUP_PREFIX}{lease.uid}") if wants_cgroup else None
        self.memory_limit = "cgroup" if self.cgroups else "rlimit"

    def launch(self, driver_args: list[str]) -> tuple[subprocess.Popen[bytes], socket.socket]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [self.settings.python, "-I", "-B", str(DRIVER_DIR / "driver.py"), *driver_args]
        command += ["--control-fd", str(theirs.fileno())]
        if self.cgroups is not None:
            command = cgroup_wrapper(self.cgroups.join_files()) + command
        env = {**PROGRAM_ENV, "HOME": self.directory, "TMPDIR": self.directory}
        try:
            process = spawn(
                command,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.directory,
                start_new_session=True,
            )
        finally:
            theirs.close()
        return process, ours

    def apply(self, limits: Limits) -> None:
        if self.cgroups is not None:
            self.cgroups.set_memory((limits.memory_mb << 20) + (128 << 20))
            self.cgroups.set_max_processes(limits.max_processes + SANDBOX_OWN_TASKS)

    def kill_programs(self) -> None:
        if self.root:
            kill_uid(self.program_uid)

    def oom_kills(self) -> int | None:
        return self.cgroups.oom_kills() if self.cgroups else None

    def destroy(self) -> None:
        if self.cgroups is not None:
            self.cgroups.remove()
        shutil.rmtree(self.directory, ignore_errors=True)
        super().destroy()

    def details(self) -> dict[str, Any]:
        return {**super().details(), "isolated": False}
