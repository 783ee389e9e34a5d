"""Memory and process-count cgroups for one sandbox, where the machine lets us make them.

Why a cgroup and not ``RLIMIT_AS``: the address-space limit is per process and counts reserved,
not used, memory, so it breaks numpy and threaded programs long before they use the memory, and
a program that forks gets the limit once per child. A memory cgroup limits what all of a run's
processes really use, together, and its OOM kills are counted, so "memory" is a verdict we can
tell apart from a crash.

We create ``rewardhub-sandbox-<uid>`` beside nothing else: under the cgroup this process already
lives in, for each of the ``memory`` and ``pids`` controllers, on cgroup v1 or v2. Where that is
not allowed (no write access, or a v2 hierarchy whose parent has not delegated the controllers),
:func:`SandboxCgroups.create` answers None and the sandbox falls back to rlimits; the results say
which one was active.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxCgroups", "cgroup_dirs", "sweep"]

CONTROLLERS = ("memory", "pids")


@dataclass(frozen=True)
class _Hierarchy:
    version: int
    own: Path
    """The cgroup this process is in, on that hierarchy."""


def cgroup_dirs(pid: int | str = "self") -> dict[str, _Hierarchy]:
    """For each controller we use, the hierarchy that has it and this process's cgroup there
    (or another process's: a container's server, whose cgroups Docker made)."""
    membership: dict[str, str] = {}
    for line in _read(f"/proc/{pid}/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            membership[controller] = path
    found: dict[str, _Hierarchy] = {}
    for line in _read("/proc/self/mountinfo").splitlines():
        before, _, after = line.partition(" - ")
        fields, (fstype, _source, options) = before.split(), after.split()[:3]
        root, mountpoint = fields[3], fields[4]
        if fstype == "cgroup":
            for controller in CONTROLLERS:
                if controller in options.split(",") and controller in membership:
                    found[controller] = _Hierarchy(1, _inside(mountpoint, root, membership[controller]))
        elif fstype == "cgroup2" and "" in membership:
            own = _inside(mountpoint, root, membership[""])
            available = _read(own / "cgroup.controllers").split() if (own / "cgroup.controllers").exists() else []
            for controller in CONTROLLERS:
                if controller in available and controller not in found:
                    found[controller] = _Hierarchy(2, own)
    return found


def _inside(mountpoint: str, root: str, path: str) -> Path:
    relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return Path(mountpoint) / ("" if relative == "." else relative)


class SandboxCgroups:
    """One sandbox's memory and pids cgroups (one directory for both on cgroup v2)."""

    def __init__(self, memory: tuple[int, Path], pids: tuple[int, Path] | None) -> None:
        self.memory_version, self.memory_dir = memory
        self.pids_dir = pids[1] if pids else None
        self._events_fd: int | None = None

    @classmethod
    def create(cls, name: str) -> SandboxCgroups | None:
        """Make (or take back, if a dead process left them) this sandbox's cgroups; None if not allowed."""
        hierarchies = cgroup_dirs()
        if "memory" not in hierarchies:
            return None
        made: dict[str, tuple[int, Path]] = {}
        for controller, hierarchy in hierarchies.items():
            directory = hierarchy.own / name
            try:
                if hierarchy.version == 2:
                    _delegate(hierarchy.own, controller)
                _fresh_dir(directory)
            except OSError:
                continue
            made[controller] = (hierarchy.version, directory)
        if "memory" not in made:
            for _, directory in made.values():
                _rmdir(directory)
            return None
        cgroups = cls(made["memory"], made.get("pids"))
        try:
            cgroups.set_memory(256 << 20)
        except OSError:
            cgroups.remove()
            return None
        return cgroups

    @classmethod
    def of_process(cls, pid: int) -> SandboxCgroups | None:
        """The memory and pids cgroups another process already lives in (a container's), to read
        and set from here; None where they cannot be found or written."""
        try:
            hierarchies = cgroup_dirs(pid)
        except OSError:
            return None
        if "memory" not in hierarchies or not os.access(hierarchies["memory"].own / "cgroup.procs", os.W_OK):
            return None
        pids = hierarchies.get("pids")
        memory = hierarchies["memory"]
        return cls((memory.version, memory.own), (pids.version, pids.own) if pids else None)

    @property
    def directories(self) -> list[Path]:
        return sorted({self.memory_dir, *([self.pids_dir] if self.pids_dir else [])})

    def join_files(self) -> list[str]:
        """The files a process writes its pid into to join these cgroups."""
        return [str(directory / "cgroup.procs") for directory in self.directories]

    def set_memory(self, limit_bytes: int) -> None:
        if self.memory_version == 2:
            _write(self.memory_dir / "memory.max", limit_bytes)
            _write_if_present(self.memory_dir / "memory.swap.max", 0)
            return
        current = int(_read(self.memory_dir / "memory.limit_in_bytes"))
        swap = self.memory_dir / "memory.memsw.limit_in_bytes"
        # memory <= memory+swap must hold after every single write
        if limit_bytes > current:
            _write_if_present(swap, limit_bytes)
            _write(self.memory_dir / "memory.limit_in_bytes", limit_bytes)
        else:
            _write(self.memory_dir / "memory.limit_in_bytes", limit_bytes)
            _write_if_present(swap, limit_bytes)

    def set_max_processes(self, count: int) -> None:
        if self.pids_dir is not None:
            _write(self.pids_dir / "pids.max", count)

    def memory_usage(self) -> int:
        name = "memory.current" if self.memory_version == 2 else "memory.usage_in_bytes"
        return int(_read(self.memory_dir / name))

    def oom_kills(self) -> int | None:
        """How many processes the kernel has killed here for memory (None if it does not say).

        Read twice per run, so the file stays open: ``pread`` at offset 0 makes the kernel write
        the counters afresh, without an open and a close each time.
        """
        if self._events_fd is None:
            name = "memory.events" if self.memory_version == 2 else "memory.oom_control"
            self._events_fd = os.open(self.memory_dir / name, os.O_RDONLY | os.O_CLOEXEC)
        for line in os.pread(self._events_fd, 4096, 0).decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return None

    def processes(self) -> list[int]:
        pids: set[int] = set()
        for directory in self.directories:
            try:
                pids.update(int(pid) for pid in _read(directory / "cgroup.procs").split())
            except OSError:
                continue
        return sorted(pids)

    def kill(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL everything in these cgroups until nothing is left; True if that happened in time."""
        deadline = time.monotonic() + timeout_s
        while pids := self.processes():
            if time.monotonic() > deadline:
                return False
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)
        return True

    def close(self) -> None:
        """Let go of the open counters file (the cgroups stay: for ones we did not make)."""
        if self._events_fd is not None:
            os.close(self._events_fd)
            self._events_fd = None

    def remove(self) -> None:
        self.close()
        self.kill()
        for directory in self.directories:
            _rmdir(directory)


def sweep(prefix: str, in_use: Callable[[str], bool]) -> list[Path]:
    """Remove our cgroups that nobody holds any more (their owner was killed); the ones removed."""
    removed = []
    for hierarchy in cgroup_dirs().values():
        try:
            candidates = [d for d in hierarchy.own.iterdir() if d.is_dir() and d.name.startswith(prefix)]
        except OSError:
            continue
        for directory in candidates:
            if not in_use(directory.name):
                SandboxCgroups((1, directory), None).kill(timeout_s=1.0)
                _rmdir(directory)
                removed.append(directory)
    return removed


def _delegate(parent: Path, controller: str) -> None:
    """cgroup v2 only hands a controller to children listed in the parent's subtree_control."""
    enabled = _read(parent / "cgroup.subtree_control").split()
    if controller not in enabled:
        _write(parent / "cgroup.subtree_control", f"+{controller}")


def _fresh_dir(directory: Path) -> None:
    if directory.exists():  # left by a process that died: take it back empty
        SandboxCgroups((1, directory), None).kill()
        _rmdir(directory)
    directory.mkdir()


def _rmdir(directory: Path) -> None:
    for _ in range(100):
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY while the last killed processes are being reaped
            time.sleep(0.01)


def _read(path: str | Path) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: Path, value: object) -> None:
    with open(path, "w") as handle:
        handle.write(str(value))


def _write_if_present(path: Path, value: object) -> None:
    if path.exists():
        _write(path, value)
