"""The local backend: bubblewrap namespaces, a read-only system, cgroups where allowed.

Each warm sandbox is one ``bwrap`` process tree:

- **namespaces**: its own network (no interface but a downed loopback: the host's Redis on
  127.0.0.1 and the service itself are unreachable), pid (the programs see only themselves), IPC,
  UTS and cgroup namespaces;
- **filesystem**: an empty root with read-only binds of /usr, the few /etc files programs need,
  the interpreter's folders and the driver; a fresh /proc and /dev; size-capped private tmpfs on
  /tmp, /dev/shm and /mnt (:data:`~rewardhub.sandbox.isolation.JOB_FOLDERS`) that vanish with the
  sandbox (and are emptied between jobs); an /etc/hosts of its own (:data:`HOSTS`), so
  ``localhost`` resolves to the sandbox's own loopback;
- **users**: run as root, bubblewrap keeps only CAP_SETUID, CAP_SETGID and CAP_KILL for the fork
  server, with ``no_new_privs``; every program drops to this sandbox's own uid (from
  ``uid_base``), which no other process on the host has. Run as a normal user, bubblewrap maps one
  uid in a user namespace instead (and user namespaces inside are disabled);
- **environment**: cleared, then a fixed PATH, HOME, locale: nothing of the service's;
- **lifetime**: ``--die-with-parent``, so a worker killed by its hard timeout takes its sandboxes
  with it.

- **system calls**: the seccomp filter of :mod:`~rewardhub.sandbox.syscall_filter` (no new
  namespaces, keyrings, eBPF, perf, io_uring, mounts, ptrace, kernel loading), given to bubblewrap
  as ``--seccomp FD`` and so in force from the fork server's first instruction on.

What it does not do: hide /usr and the interpreter's installed packages (read-only, but readable).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

from rewardhub.sandbox.cgroups import SandboxCgroups
from rewardhub.sandbox.errors import SandboxUnavailable
from rewardhub.sandbox.isolation import (
    CGROUP_PREFIX,
    DRIVER_DIR,
    JOB_FOLDERS,
    PROGRAM_ENV,
    Isolation,
    UidLease,
    cgroup_wrapper,
    interpreter_paths,
    kill_uid,
    spawn,
)
from rewardhub.sandbox.limits import SANDBOX_OWN_TASKS, Limits
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.syscall_filter import bpf_program, sealed_fd

__all__ = ["BwrapIsolation", "bwrap_command", "find_bwrap"]

INSIDE_DRIVER_DIR = "/opt/rewardhub/inside"
HOST_MOUNT = "/opt/rewardhub/host"  # host folders that the scratch mounts would cover
SCRATCH_MOUNTS = JOB_FOLDERS
ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
)
"""All of /etc a program gets from the host: the dynamic loader's, the compilers' alternatives, names of users."""
HOSTS = "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n"
"""The sandbox's /etc/hosts (Debian's, for the sandbox's hostname): ``localhost`` is its own loopback,
as on any machine (a test server bound there is reached by name), and nothing of the host's names."""
TOOLCHAIN_ETC = ("/etc/java-*",)
"""Configuration that toolchains keep in /etc (the JVM reads its jvm.cfg and security files there)."""

TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
STACK_LIMIT_KB = 1 << 20
"""1 GiB of stack for programs (memory is capped by the cgroup anyway): deep recursion works."""


def find_bwrap(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SandboxUnavailable(
            f"code execution is disabled: bubblewrap ({name!r}) is not installed. Install it "
            "(scripts/install_system_deps.sh) or choose another backend with REWARDHUB_SANDBOX_BACKEND=docker "
            "(or =unsafe, which runs code without any isolation)."
        )
    version = _version(path)
    if version < MIN_VERSION:
        raise SandboxUnavailable(
            f"code execution is disabled: bubblewrap {'.'.join(map(str, version))} at {path} is too old; "
            f"the sandbox needs {'.'.join(map(str, MIN_VERSION))} or newer (--size and --perms for its scratch)"
        )
    return path


MIN_VERSION = (0, 5, 0)


@functools.lru_cache(maxsize=4)
def _version(path: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return (0,)
    numbers = re.findall(r"\d+", out)
    return tuple(int(n) for n in numbers[:3]) or (0,)


def bwrap_command(
    bwrap: str,
    python: str,
    read_only: list[str],
    driver_args: list[str],
    scratch_mb: int,
    privileged: bool,
    program_uid: int,
    seccomp_fd: int | None = None,
    hosts_fd: int | None = None,
) -> list[str]:
    """The full bubblewrap command line for one fork server (a pure function: tested as such);
    ``hosts_fd`` holds the sandbox's /etc/hosts."""
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if privileged:
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    else:
        argv += ["--unshare-user", "--uid", str(program_uid), "--gid", str(program_uid), "--disable-userns"]
    for name in TOP_LEVEL:
        path = Path("/") / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    inside = {path: inside_path(path) for path in read_only}
    # bubblewrap copies a bind's parent folders' modes (/root is 0700): open them for the program
    for folder in _ancestors([*inside.values(), INSIDE_DRIVER_DIR]):
        argv += ["--perms", "0755", "--dir", folder]
    for path in read_only:
        argv += ["--ro-bind-try" if path.startswith("/etc/") else "--ro-bind", path, inside[path]]
    if hosts_fd is not None:
        argv += ["--perms", "0644", "--ro-bind-data", str(hosts_fd), "/etc/hosts"]
    argv += ["--ro-bind", str(DRIVER_DIR), INSIDE_DRIVER_DIR]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(scratch_mb << 20), "--tmpfs", "/tmp"]
    for folder in JOB_FOLDERS[1:]:  # the other writable folders: a quarter of the scratch each
        argv += ["--perms", "1777", "--size", str(max(16, scratch_mb // 4) << 20), "--tmpfs", folder]
    argv += ["--clearenv"]
    for key, value in PROGRAM_ENV.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/tmp", "--", inside_path(python), "-I", "-B", f"{INSIDE_DRIVER_DIR}/driver.py", *driver_args]
    return argv


def inside_path(path: str) -> str:
    """Where a host path is mounted in the sandbox. The scratch tmpfs covers /tmp and /dev/shm, so
    an interpreter that lives under them (a checkout in /tmp with its venv) is mounted elsewhere;
    a venv's interpreter finds its ``pyvenv.cfg`` next to the path it is started from."""
    for shadowed in SCRATCH_MOUNTS:
        if path == shadowed or path.startswith(shadowed + "/"):
            return HOST_MOUNT + path
    return path


def _ancestors(paths: list[str]) -> list[str]:
    folders: set[str] = set()
    for path in paths:
        parent = Path(path).parent
        while str(parent) != "/":
            folders.add(str(parent))
            parent = parent.parent
    bound = set(paths) | {"/usr"}
    return sorted(f for f in folders if not any(f == b or f.startswith(b + "/") for b in bound))


class BwrapIsolation(Isolation):
    backend = "bwrap"
    scratch = JOB_FOLDERS

    def __init__(self, settings: SandboxSettings, lease: UidLease) -> None:
        super().__init__(settings, lease)
        self.bwrap = find_bwrap(settings.bwrap)
        self.privileged = os.geteuid() == 0
        if not self.privileged:
            self.program_uid = 65534  # one uid is all a user namespace maps for us
            self.shares_host_uid = True
        self.cgroups = (
            SandboxCgroups.create(f"{CGROUP_PREFIX}{lease.uid}") if settings.memory_limit != "rlimit" else None
        )
        if self.cgroups is None and settings.memory_limit == "cgroup":
            raise SandboxUnavailable("memory_limit=cgroup, but this machine does not let us create memory cgroups")
        self.memory_limit = "cgroup" if self.cgroups else "rlimit"
        self._memory_bytes: int | None = None
        self._max_processes: int | None = None
        self.seccomp = bpf_program(settings.seccomp_python) if settings.syscall_filter else None

    def launch(self, driver_args: list[str]) -> tuple[subprocess.Popen[bytes], socket.socket]:
        python = self.settings.python
        toolchains = sorted(path for pattern in TOOLCHAIN_ETC for path in glob.glob(pattern))
        read_only = [
            "/usr",
            *ETC_FILES,
            *toolchains,
            *(p for p in interpreter_paths(python) if not p.startswith("/usr/")),
        ]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        filter_fd = sealed_fd(self.seccomp) if self.seccomp is not None else None
        hosts_fd = sealed_fd(HOSTS.encode(), "rewardhub-hosts")
        command = bwrap_command(
            self.bwrap,
            python,
            read_only,
            [*driver_args, "--control-fd", str(theirs.fileno())],
            self.settings.scratch_mb,
            self.privileged,
            self.program_uid,
            filter_fd,
            hosts_fd,
        )
        wrapper = cgroup_wrapper(self.cgroups.join_files() if self.cgroups else [], stack_kb=STACK_LIMIT_KB)
        try:
            process = spawn(
                wrapper + command,
                pass_fds=(theirs.fileno(), hosts_fd) + ((filter_fd,) if filter_fd is not None else ()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={},
                start_new_session=True,
            )
        finally:
            theirs.close()
            os.close(hosts_fd)
            if filter_fd is not None:
                os.close(filter_fd)
        return process, ours

    def apply(self, limits: Limits) -> None:
        if self.cgroups is None:
            return
        # written only when they change (only this process writes them): two writes less per run
        wanted = (limits.memory_mb << 20) + self.baseline_bytes
        if wanted != self._memory_bytes:
            self.cgroups.set_memory(wanted)
            self._memory_bytes = wanted
        processes = limits.max_processes + SANDBOX_OWN_TASKS
        if processes != self._max_processes:
            self.cgroups.set_max_processes(processes)
            self._max_processes = processes

    baseline_bytes = 64 << 20
    """What the server and its tmpfs use before a program runs; measured once it is up."""

    def measure_baseline(self) -> None:
        if self.cgroups is not None:
            self.baseline_bytes = self.cgroups.memory_usage() + (16 << 20)

    def oom_kills(self) -> int | None:
        return self.cgroups.oom_kills() if self.cgroups else None

    def kill_programs(self) -> None:
        if self.privileged:
            kill_uid(self.program_uid)

    def destroy(self) -> None:
        if self.cgroups is not None:
            self.cgroups.remove()
        super().destroy()

    def details(self) -> dict[str, Any]:
        return {**super().details(), "uid": self.program_uid, "syscall_filter": self.seccomp is not None}
