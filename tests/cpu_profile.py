"""Where the suite's CPU goes: each test's CPU time, counting every process it started.

CI runs on two cores and is CPU-bound (the cores sat 99% busy through a whole run), so its wall
time is its CPU time over two. pytest's own timings do not say whose CPU that is: a service, a
Celery worker, a vLLM engine or a sandboxed program runs in a process of its own, often in a
session of its own that the test process never reaps, so ``getrusage`` misses it (measured: the
test processes' own accounting saw 1,231 CPU-seconds of a run that used 2,367).

With ``REWARDHUB_CPU_PROFILE=FILE`` set, each test process (every xdist worker, or the one process
of ``-n 0``) moves itself into a control group of its own before its first test. Everything it
starts from then on is born in that group, so the group's CPU counter, read before and after each
test, is the test's CPU with all its descendants', reaped or not. (Docker containers run in the
engine's own groups and are not counted; nor is CPU an earlier test's leftover process burns while
a later test runs, which is then counted to the later one.) Each test appends one JSON line to
FILE; ``python tests/cpu_profile.py FILE`` sums them by file, most CPU first:

    REWARDHUB_CPU_PROFILE=/tmp/cpu.jsonl ./.ci/run
    python tests/cpu_profile.py /tmp/cpu.jsonl

Needs a writable cgroup hierarchy (root on a machine with cgroup v1's ``cpuacct`` or cgroup v2);
without one the run stops at once and says so, rather than reporting numbers that miss half.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ENV = "REWARDHUB_CPU_PROFILE"
CGROUP_V1 = Path("/sys/fs/cgroup/cpuacct")
"""cgroup v1's CPU accounting hierarchy (``cpuacct.usage``: nanoseconds)."""
CGROUP_V2_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
"""Where cgroup v2 is mounted: alone, or beside v1 (``cpu.stat``'s ``usage_usec``: microseconds)."""


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy that counts CPU: where groups are made and how their count is read."""

    root: Path
    counter: str
    """The file in each group that holds its CPU time."""
    field: str | None
    """The line of that file that holds it (cgroup v2's ``cpu.stat``), or None where it is the whole file."""
    scale: float
    """Seconds per unit of the count."""


def hierarchy() -> Hierarchy | None:
    """cgroup v1's ``cpuacct`` where it is mounted, else cgroup v2, else None."""
    if (CGROUP_V1 / "cpuacct.usage").exists():
        return Hierarchy(CGROUP_V1, "cpuacct.usage", None, 1e-9)
    root = next((r for r in CGROUP_V2_ROOTS if (r / "cgroup.controllers").exists()), None)
    return Hierarchy(root, "cpu.stat", "usage_usec", 1e-6) if root is not None else None


class CpuCounter:
    """A control group of this process's own and the CPU seconds its members have used."""

    def __init__(self, group: Path, kind: Hierarchy) -> None:
        self.group, self.kind = group, kind

    @classmethod
    def join_new_group(cls, name: str) -> CpuCounter:
        """Make a group named ``name`` and move this process into it (its later children follow)."""
        kind = hierarchy()
        if kind is None:
            raise RuntimeError("no cgroup v1 cpuacct or cgroup v2 hierarchy is mounted")
        group = kind.root / name
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
        return cls(group, kind)

    def leave(self) -> None:
        """Move this process back to the parent group and remove this one, if nothing is left in it
        (a process a test left running keeps it, and its CPU can still be read there)."""
        (self.group.parent / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(40):  # a process that has just exited may hold the group a moment longer
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.05)

    def seconds(self) -> float:
        text = (self.group / self.kind.counter).read_text()
        if self.kind.field is not None:
            text = next(line.split()[1] for line in text.splitlines() if line.startswith(self.kind.field))
        return int(text) * self.kind.scale


class CpuProfile:
    """The pytest plugin: one JSON line per test, ``{"nodeid", "worker", "start", "wall_s", "cpu_s"}``."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        try:
            self.counter = CpuCounter.join_new_group(f"rewardhub-tests-{self.worker}-{os.getpid()}")
        except (OSError, RuntimeError) as exc:
            raise pytest.UsageError(f"{ENV} needs a writable cgroup hierarchy (run as root): {exc}") from exc

    def pytest_unconfigure(self) -> None:
        self.counter.leave()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        cpu, start = self.counter.seconds(), time.time()
        yield
        record = {
            "nodeid": item.nodeid,
            "worker": self.worker,
            "start": start,
            "wall_s": time.time() - start,
            "cpu_s": self.counter.seconds() - cpu,
        }
        with self.out.open("a") as out:  # one short append per test: the workers' lines do not interleave
            out.write(json.dumps(record) + "\n")


def install(config: pytest.Config) -> None:
    """Register the plugin when ``REWARDHUB_CPU_PROFILE`` names a file (tests/conftest.py calls this):
    in each xdist worker, or in the one process of a run without workers. An xdist controller runs
    no test, so it stays out."""
    out = os.environ.get(ENV)
    controller = not os.environ.get("PYTEST_XDIST_WORKER") and config.getoption("numprocesses", None)
    if out and not controller:
        config.pluginmanager.register(CpuProfile(Path(out)), "rewardhub-cpu-profile")


@dataclass
class FileCost:
    path: str
    tests: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0


def by_file(records: Iterable[dict]) -> list[FileCost]:
    """The records summed by test file, most CPU first."""
    files: dict[str, FileCost] = {}
    for record in records:
        path = record["nodeid"].split("::", 1)[0]
        cost = files.setdefault(path, FileCost(path))
        cost.tests += 1
        cost.cpu_s += record["cpu_s"]
        cost.wall_s += record["wall_s"]
    return sorted(files.values(), key=lambda cost: (-cost.cpu_s, cost.path))


def report(records: list[dict], top: int = 40) -> str:
    files = by_file(records)
    total = sum(cost.cpu_s for cost in files) or 1.0
    lines = [
        f"{len(records)} tests in {len(files)} files: {total:.0f} CPU-seconds",
        "  cpu_s  share  cumul  wall_s  tests  file",
    ]
    cumulative = 0.0
    for cost in files[:top]:
        cumulative += cost.cpu_s
        lines.append(
            f"{cost.cpu_s:7.1f} {cost.cpu_s / total:6.1%} {cumulative / total:6.1%} {cost.wall_s:7.1f} {cost.tests:6d}  {cost.path}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    lines = Path(sys.argv[1]).read_text().splitlines()
    print(
        report([json.loads(line) for line in lines if line.strip()], top=int(sys.argv[2]) if len(sys.argv) > 2 else 40)
    )
