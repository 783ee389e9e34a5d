"""What every backend provides to a warm sandbox, and the pieces they share.

A backend (bubblewrap, Docker, unsafe) decides how the fork server is started and walled off, how
memory is limited, and how the programs' processes are killed from outside. Everything above it,
the protocol, the verdicts, the pool, is the same code for all of them, which is why they give
the same verdicts.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import socket
import subprocess
import threading
from abc import ABC, abstractmethod
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar

from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.settings import SandboxSettings

__all__ = [
    "CGROUP_PREFIX",
    "DRIVER_DIR",
    "JOB_FOLDERS",
    "PROGRAM_ENV",
    "Isolation",
    "UidLease",
    "cgroup_wrapper",
    "count_tasks",
    "interpreter_paths",
    "kill_uid",
    "lease_uid",
    "spawn",
    "uid_taken",
]

DRIVER_DIR = Path(__file__).resolve().parent / "inside"
"""The trusted code that runs inside the sandbox (mounted read-only there)."""

JOB_FOLDERS = ("/tmp", "/dev/shm", "/mnt")
"""The folders a job's programs may write, as they see them in a sandbox: /tmp (their working
directory), /dev/shm, and /mnt, where SandboxFusion's programs write too. Each is a private tmpfs,
emptied between jobs; a job's absolute file paths must lie in one of them."""

CGROUP_PREFIX = "rewardhub-sandbox-"
"""Our cgroups are named this plus the sandbox's uid."""

PROGRAM_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    # one thread per numerical library: the pids limit is for the program's own threads
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
"""The whole environment a program sees: nothing of the service's (API keys included) gets in."""


class Isolation(ABC):
    """One sandbox's walls: how its server starts, how memory is capped, how programs are killed."""

    backend: ClassVar[str]
    kill_scope: str = "pidns"
    scratch: tuple[str, ...] = ("/tmp", "/dev/shm")
    check_ipc: bool = True
    memory_limit: str = "rlimit"
    """``cgroup`` (all processes of a run together), ``container`` or ``rlimit`` (RLIMIT_AS per process)."""

    def __init__(self, settings: SandboxSettings, lease: UidLease) -> None:
        self.settings = settings
        self.lease = lease
        self.program_uid = lease.uid

    @abstractmethod
    def launch(self, driver_args: list[str]) -> tuple[subprocess.Popen[bytes], socket.socket]:
        """Start the fork server with these arguments; its process and the parent's end of the control socket."""

    def apply(self, limits: Limits) -> None:  # noqa: B027 (optional hook: most backends have nothing to set)
        """Set the sandbox-wide limits (cgroups) for the next run."""

    def oom_kills(self) -> int | None:
        """The kernel's count of memory kills in this sandbox so far, where it can be read."""
        return None

    shares_host_uid = False
    """The programs run under the service's own uid (no root to give them one of their own)."""

    def other_tasks(self) -> int:
        """Tasks of the programs' uid that are not the programs' (they count against RLIMIT_NPROC)."""
        return count_tasks(os.getuid()) if self.shares_host_uid else 0

    def kill_programs(self) -> None:  # noqa: B027 (optional hook: not every backend can)
        """Kill the programs' processes from outside, without the server's help (best effort)."""

    def destroy(self) -> None:
        """Tear the sandbox down: every process in it, its cgroups, its files."""
        self.lease.release()

    def details(self) -> dict[str, Any]:
        return {"backend": self.backend, "memory_limit": self.memory_limit}


class UidLease:
    """A user id that belongs to one sandbox for its lifetime, across all processes on this host.

    The claim is an abstract Unix socket name: it needs no file, and the kernel drops it when the
    holder dies, so a killed worker never leaves a uid taken.
    """

    def __init__(self, uid: int, claim: socket.socket | None) -> None:
        self.uid = uid
        self._claim = claim

    def release(self) -> None:
        if self._claim is not None:
            self._claim.close()
            self._claim = None


def count_tasks(uid: int) -> int:
    """Threads of all processes whose real uid is ``uid``, as RLIMIT_NPROC counts them."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            total += int(fields.get("Threads", "1"))
    return total


def uid_taken(uid: int) -> bool:
    """Whether a live process holds this sandbox uid (the claim goes when its holder dies)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.bind(f"\0rewardhub-sandbox-uid-{uid}")
    except OSError:
        return True
    finally:
        probe.close()
    return False


def lease_uid(base: int, count: int) -> UidLease:
    for uid in range(base, base + count):
        claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            claim.bind(f"\0rewardhub-sandbox-uid-{uid}")
        except OSError:
            claim.close()
            continue
        return UidLease(uid, claim)
    raise SandboxError(f"all {count} sandbox user ids from {base} are taken")


def cgroup_wrapper(join_files: list[str], stack_kb: int | None = None) -> list[str]:
    """A ``/bin/sh`` prefix that joins the cgroups, then execs the rest of the command line.

    Joining before the exec means everything the sandbox ever runs starts inside its cgroups: no
    window in which an early fork could land outside them.
    """
    script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 121; shift; n=$((n-1)); done; '
    if stack_kb is not None:
        script += f"ulimit -s {stack_kb} || exit 122; "
    return ["/bin/sh", "-c", script + 'exec "$@"', "sh", str(len(join_files)), *join_files]


def kill_uid(uid: int) -> None:
    """``kill(-1)`` as ``uid``: every process of that uid, atomically against fork (needs root).

    A sandbox's uid belongs to nothing else on the host, so this kills exactly its programs,
    daemons that double-forked and changed session included, and never its server.
    """
    try:
        subprocess.run(
            ["/bin/sh", "-c", "kill -KILL -1"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={},
            timeout=10,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # the caller falls back to tearing the whole sandbox down


@functools.lru_cache(maxsize=8)
def interpreter_paths(python: str) -> tuple[str, ...]:
    """The folders an interpreter needs at run time (its prefixes, a venv's and its base's)."""
    probe = (
        "import json, os, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))"
    )
    try:
        out = subprocess.run([python, "-I", "-c", probe], capture_output=True, check=True, timeout=60, env={}).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot run the sandbox interpreter {python!r}: {exc}") from exc
    paths = {str(Path(p).resolve()) for p in json.loads(out)}
    return tuple(sorted(paths))


class _Spawner:
    """Starts sandboxes from one long-lived thread.

    ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked bubblewrap exits,
    not the process, and a server's worker threads come and go: a sandbox started from one would
    die with it. Forking from a thread that lives as long as the process avoids that.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[tuple[Future[Any], tuple[Any, ...], dict[str, Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():  # also after a fork of this process
                self._requests = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._serve, name="sandbox-spawner", daemon=True)
                self._thread.start()
            requests = self._requests
        future: Future[subprocess.Popen[bytes]] = Future()
        requests.put((future, args, kwargs))
        return future.result()

    def _serve(self) -> None:
        requests = self._requests
        while True:
            future, args, kwargs = requests.get()
            try:
                future.set_result(subprocess.Popen(*args, **kwargs))
            except Exception as exc:  # handed to the caller, who raises it
                future.set_exception(exc)

    def forget_after_fork(self) -> None:
        """In a forked child the thread is gone, and the lock may be held by a thread that is too."""
        self._lock = threading.Lock()
        self._thread = None


_spawner = _Spawner()
spawn = _spawner.popen
os.register_at_fork(after_in_child=_spawner.forget_after_fork)
