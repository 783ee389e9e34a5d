"""What one run may use. Every limit is enforced by the kernel or by the trusted parent, never by
the program's own interpreter."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["CHILDREN_AHEAD", "COMPILE_LIMITS", "SANDBOX_OWN_TASKS", "Limits"]

CHILDREN_AHEAD = 2
"""Children a sandbox's server forks in one burst, ahead of the runs they become: each fork makes
the server copy every page it writes afterwards once, so two forks at a time halve those copies."""
SANDBOX_OWN_TASKS = 3 + CHILDREN_AHEAD
"""Tasks of the sandbox's own beside a run's: its init, the fork server, the children forked for
the next runs, and one helper of the server's. A run's ``max_processes`` is on top of these."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    """Wall clock, kept by the parent; past it the whole process tree is killed."""
    memory_mb: int = 512
    """Memory of all the run's processes together (a cgroup), or per process (RLIMIT_AS) as a fallback."""
    max_processes: int = 64
    """Processes and threads at once (pids cgroup and RLIMIT_NPROC)."""
    max_file_mb: int = 64
    """Largest file the program may write (RLIMIT_FSIZE)."""
    max_open_files: int = 256
    max_output_bytes: int = 1 << 20
    """stdout and stderr together; the parent stops reading and kills the run past it."""
    reserved_mb: int = 0
    """Address space a runtime reserves without using it (the JVM's class space, Go's arenas, V8's
    cage), allowed on top of ``memory_mb`` where memory can only be capped by RLIMIT_AS."""

    @property
    def cpu_s(self) -> int:
        """CPU seconds (RLIMIT_CPU): a spinning program is stopped even if the clock were not kept."""
        return math.ceil(self.timeout_s) + 1

    def rlimits(self, address_space: bool, other_tasks: int = 0) -> dict[str, int | None]:
        """The per-process limits the server sets in the child, by the names it knows.

        RLIMIT_NPROC counts every task of the program's real uid on the host; where that uid is
        not the sandbox's alone (``other_tasks`` of it exist already), the limit is raised by
        that many, which makes it approximate.
        """
        return {
            "cpu_s": self.cpu_s,
            "fsize": self.max_file_mb << 20,
            "nofile": self.max_open_files,
            "nproc": self.max_processes + other_tasks,
            "address_space": ((self.memory_mb + self.reserved_mb) << 20) if address_space else None,
        }

    def with_(self, **changes: object) -> Limits:
        return replace(self, **changes)  # type: ignore[arg-type]


COMPILE_LIMITS = Limits(timeout_s=20.0, memory_mb=1024, max_processes=64, max_file_mb=256, max_output_bytes=256 << 10)
"""For compilers: slower and hungrier than the programs they build, and they fork (cc1plus, as, ld) and
run threads (javac is a JVM, ``go build`` runs the compiler and linker beside itself)."""
