"""The system calls a sandboxed program may not make: one policy, as a Docker profile and as BPF.

Anchored on Docker's default seccomp profile: what it refuses to a container without
``CAP_SYS_ADMIN`` and friends is what a submitted program has no business doing either, and what
has carried kernel exploits in practice: new user (and other) namespaces, kernel keyrings, eBPF,
perf events, io_uring, mounts, ptrace and its cousins, loading kernels and modules, setting the
clock, rebooting. Everything else is allowed (threads, ``fork``/``vfork``, Unix and IP sockets
that the network namespace already leaves nowhere to go, ``mmap``...), so compilers, interpreters
and runtimes work unchanged. A denylist rather than Docker's allowlist: the namespaces, the dropped
capabilities and the resource limits are the walls, the filter closes the kernel interfaces
that would let a program reach past them.

- ``clone`` and ``unshare`` are refused only with a namespace flag; ``clone3`` passes its flags
  in memory, which a filter cannot read, so it answers ENOSYS and the C library falls back to
  ``clone`` (as Docker does).
- ``socket`` and ``socketpair`` are refused (EAFNOSUPPORT, what the kernel says of a family it
  lacks) for every address family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK
  (:data:`SOCKET_FAMILIES`). A network namespace confines only IP (and routing netlink): AF_VSOCK
  reaches the hypervisor and its other guests, and packet, Bluetooth, crypto (AF_ALG), TIPC, RDS,
  CAN, XDP... are kernel code a program has no use for. Netlink stays for NETLINK_ROUTE alone
  (other protocols: EPROTONOSUPPORT), which ``getifaddrs`` and ``if_nameindex`` need (Node's
  ``os.networkInterfaces``, Go's ``net.Interfaces``, Python's ``socket.if_nameindex``); it sees
  the sandbox's own namespace, where changing anything needs a capability the program lacks.
  The family is compared as the kernel reads it, an ``int`` (the low 32 bits: a caller cannot
  hide AF_VSOCK behind high bits), and every value past the last family is refused as well.
- Only the native architecture's calls are allowed at all: a 32-bit ``int 0x80`` call, which
  would bypass a denylist written in 64-bit numbers, kills the process (libseccomp's bad-arch
  action).

The policy is written once, as a Docker seccomp profile (:func:`docker_profile`), which Docker
takes as ``--security-opt seccomp=FILE``. For bubblewrap the same profile is compiled to a BPF
program with libseccomp's Python bindings (:mod:`rewardhub.sandbox.seccomp_compile`, run by the
system's Python, which is where Debian's ``python3-seccomp`` lives) and handed over as
``--seccomp FD``. Compiled once per process.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardhub.sandbox.errors import SandboxUnavailable

__all__ = [
    "REFUSED",
    "SOCKET_FAMILIES",
    "Refusal",
    "bpf_program",
    "docker_profile",
    "sealed_fd",
    "write_docker_profile",
]

COMPILER = Path(__file__).resolve().parent / "seccomp_compile.py"

CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
UNSHARE_ONLY_FLAGS = {"CLONE_NEWTIME": 0x00000080}
"""For ``clone`` the low byte is the exit signal, so CLONE_NEWTIME only means a namespace to ``unshare``."""

SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16}
"""The address families a program may open sockets of; every other one is refused."""
NETLINK_ROUTE = 0
"""The one netlink protocol allowed: the interfaces and addresses of the sandbox's namespace."""
AF_MAX = 46
"""One past the last family Linux knows (AF_MCTP = 45): larger values are refused wholesale."""
INT_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class Refusal:
    """One refused system call; with ``flags``, only when its first argument has any of them; with
    ``values``, only when its first argument, read as an ``int``, is one of them, or is at least
    ``at_least``."""

    why: str
    syscalls: tuple[str, ...]
    errno: int = errno.EPERM
    flags: tuple[int, ...] = ()
    values: tuple[int, ...] = ()
    at_least: int | None = None
    unless_third: int | None = None
    """With ``values``: refused only when the third argument (a socket's protocol) is not this."""


REFUSED: tuple[Refusal, ...] = (
    Refusal(
        "new namespaces (a user namespace gives root-like capabilities inside it)",
        ("unshare",),
        flags=tuple(CLONE_NAMESPACE_FLAGS.values()) + tuple(UNSHARE_ONLY_FLAGS.values()),
    ),
    Refusal("new namespaces by clone", ("clone",), flags=tuple(CLONE_NAMESPACE_FLAGS.values())),
    Refusal("clone3's flags cannot be inspected: callers fall back to clone", ("clone3",), errno=errno.ENOSYS),
    Refusal("joining another namespace", ("setns",)),
    Refusal(
        "socket families other than Unix and IP (AF_VSOCK reaches past the network namespace)",
        ("socket", "socketpair"),
        errno=errno.EAFNOSUPPORT,
        values=tuple(family for family in range(AF_MAX) if family not in SOCKET_FAMILIES.values()),
        at_least=AF_MAX,
    ),
    Refusal(
        "netlink protocols other than routing (audit, uevents, netfilter, generic, crypto...)",
        ("socket", "socketpair"),
        errno=errno.EPROTONOSUPPORT,
        values=(SOCKET_FAMILIES["AF_NETLINK"],),
        unless_third=NETLINK_ROUTE,
    ),
    Refusal("kernel keyrings", ("keyctl", "add_key", "request_key")),
    Refusal("eBPF programs and maps", ("bpf",)),
    Refusal("performance counters (side channels, a long record of kernel bugs)", ("perf_event_open",)),
    Refusal(
        "io_uring (its requests bypass system-call filtering)",
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    ),  # fmt: skip
    Refusal(
        "mounts",
        (
            "mount",
            "umount2",
            "pivot_root",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "move_mount",
            "open_tree",
            "mount_setattr",
        ),  # fmt: skip
    ),
    Refusal("tracing and reading other processes", ("ptrace", "process_vm_readv", "process_vm_writev")),
    Refusal(
        "loading kernels and kernel modules",
        ("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"),
    ),  # fmt: skip
    Refusal("page-fault handling in user space (a classic exploit primitive)", ("userfaultfd",)),
    Refusal("opening files by handle, around the mount namespace", ("open_by_handle_at",)),
    Refusal(
        "the machine's own state: clock, accounting, swap, reboot, kernel log, quotas, I/O ports",
        (
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "acct",
            "swapon",
            "swapoff",
            "reboot",
            "syslog",
            "quotactl",
            "iopl",
            "ioperm",
            "vhangup",
            "lookup_dcookie",
        ),  # fmt: skip
    ),
)
"""The policy, each group with the reason it is refused."""

_SCMP_ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64", "arm64": "SCMP_ARCH_AARCH64"}


def docker_profile(machine: str | None = None) -> dict[str, Any]:
    """The policy as a Docker/OCI seccomp profile (pure: the BPF program is compiled from this too)."""
    arch = _SCMP_ARCH.get(machine or platform.machine())
    rules: list[dict[str, Any]] = []
    for refusal in REFUSED:
        base = {"names": list(refusal.syscalls), "action": "SCMP_ACT_ERRNO", "errnoRet": refusal.errno}
        conditions = _conditions(refusal)
        if not conditions:
            rules.append({**base, "comment": refusal.why})
        for args in conditions:  # rules for one call are OR-ed: any one of them refuses it
            rules.append({**base, "args": args, "comment": refusal.why})
    return {"defaultAction": "SCMP_ACT_ALLOW", "architectures": [arch] if arch else [], "syscalls": rules}


def _conditions(refusal: Refusal) -> list[list[dict[str, Any]]]:
    """The conditions of each rule (AND-ed within one, rules OR-ed); one comparison per argument
    in a rule, as libseccomp allows."""
    masked = [(flag, flag) for flag in refusal.flags] + [(INT_MASK, value) for value in refusal.values]
    rules = [[{"index": 0, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}] for mask, value in masked]
    if refusal.unless_third is not None:
        rules = [[*rule, {"index": 2, "value": refusal.unless_third, "op": "SCMP_CMP_NE"}] for rule in rules]
    if refusal.at_least is not None:
        rules.append([{"index": 0, "value": refusal.at_least, "op": "SCMP_CMP_GE"}])
    return rules


def write_docker_profile(folder: str | Path) -> str:
    """Write the profile as JSON for ``docker run --security-opt seccomp=PATH``; the path."""
    path = Path(folder) / "seccomp.json"
    path.write_text(json.dumps(docker_profile(), indent=1))
    return str(path)


@functools.lru_cache(maxsize=4)
def bpf_program(python: str) -> bytes:
    """The profile compiled to a BPF program by libseccomp, with the interpreter that has its bindings."""
    try:
        done = subprocess.run(
            [python, "-I", str(COMPILER)],
            input=json.dumps(docker_profile()).encode(),
            capture_output=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise _unavailable(python, str(exc)) from None
    if done.returncode != 0 or not done.stdout or len(done.stdout) % 8:
        raise _unavailable(python, done.stderr.decode(errors="replace").strip()[-500:] or f"status {done.returncode}")
    return done.stdout


def _unavailable(python: str, why: str) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"code execution is disabled: the system-call filter cannot be built with {python} ({why}). "
        "Install libseccomp's Python bindings (Debian: python3-seccomp, see scripts/install_system_deps.sh), "
        "point REWARDHUB_SANDBOX_SECCOMP_PYTHON at an interpreter that has them, or turn the filter off "
        "with REWARDHUB_SANDBOX_SYSCALL_FILTER=false."
    )


def sealed_fd(data: bytes, name: str = "rewardhub-seccomp") -> int:
    """A file descriptor to read ``data`` from once (bubblewrap's ``--seccomp FD``, or the
    ``--ro-bind-data FD`` of a file it makes); the caller closes it."""
    fd = os.memfd_create(name, 0) if sys.platform == "linux" else -1
    if fd < 0:
        raise SandboxUnavailable("the sandbox needs Linux")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
