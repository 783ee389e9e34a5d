"""Constants and host checks shared by the sandbox tests (and the code verifier's)."""

from __future__ import annotations

import os
from pathlib import Path

from rewardhub.sandbox import Limits, SandboxSettings

SECRET = "rewardhub-test-secret-7f3a9c"
SECRET_NAME = "RH_SANDBOX_TEST_API_KEY"
SETTINGS = SandboxSettings(backend="bwrap", concurrency=2, preload=("json", "math", "numpy"))
QUICK = Limits(timeout_s=2.0, memory_mb=128, max_processes=32)
"""Short limits: an attack that is stopped by a limit costs at most two seconds."""
MARKER = "sandbox-escape"
"""Attack programs put this in every path they try to write; it must never appear on the host."""


def sandbox_processes() -> list[str]:
    """Live processes on the host with a sandbox program uid (there must be none between runs)."""
    first, last = SETTINGS.uid_base, SETTINGS.uid_base + SETTINGS.uid_count
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        uid = int(fields.get("Uid", "0").split()[0])
        if first <= uid < last and not fields.get("State", "").startswith("Z"):
            found.append(f"{entry.name} uid={uid} {fields.get('Name')}")
    return found


def host_traces() -> set[str]:
    """Our traces on the host: anything an attack tried to write, and the unsafe backend's folders."""
    found = set()
    for root in ("/tmp", "/dev/shm", "/", "/usr", "/etc"):
        found |= {
            f"{root}/{name}" for name in os.listdir(root) if MARKER in name or name.startswith("rewardhub-unsafe")
        }
    return found


def fill(prefix: str) -> str:
    """A program that writes 8 MiB files at ``prefix-N`` until its folder is full, and says why it stopped."""
    return f"""
import itertools
try:
    for n in itertools.count():
        with open(f"{prefix}-{{n}}", "wb") as f:
            f.write(b"x" * (8 << 20))
except OSError as exc:
    print(type(exc).__name__, exc.errno)
"""
