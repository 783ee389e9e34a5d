"""Memory cgroups, where this machine allows them: a limit for a whole process tree, and its kill count."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rewardhub.sandbox.cgroups import SandboxCgroups, cgroup_dirs
from rewardhub.sandbox.isolation import cgroup_wrapper


@pytest.fixture
def cgroups():
    made = SandboxCgroups.create("rewardhub-sandbox-cgroup-test")
    if made is None:
        pytest.skip(f"this machine does not let us create memory cgroups (found {sorted(cgroup_dirs())})")
    yield made
    made.remove()


def test_a_process_tree_over_the_limit_is_killed_and_counted(cgroups):
    cgroups.set_memory(64 << 20)
    before = cgroups.oom_kills()
    hog = "import os\nif os.fork() == 0:\n    x = bytearray(200 << 20)\n    os._exit(0)\nprint(os.wait()[1])\n"
    done = subprocess.run(
        cgroup_wrapper(cgroups.join_files()) + [sys.executable, "-c", hog], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "9"  # the child died of SIGKILL
    assert cgroups.oom_kills() == before + 1


def test_the_process_limit_holds_for_the_tree(cgroups):
    cgroups.set_max_processes(5)
    bomb = "import os\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            os.close(1); os.close(2); import time; time.sleep(30); os._exit(0)\n        n += 1\nexcept OSError:\n    print(n)\n"
    done = subprocess.run(
        cgroup_wrapper(cgroups.join_files()) + [sys.executable, "-c", bomb], capture_output=True, text=True, timeout=60
    )
    assert int(done.stdout) < 5
    assert cgroups.kill()
    assert cgroups.processes() == []


def test_removing_leaves_no_cgroup_behind(cgroups):
    directories = cgroups.directories
    cgroups.remove()
    assert not any(directory.exists() for directory in directories)
