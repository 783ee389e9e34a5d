"""REWARDHUB_CPU_PROFILE (tests/cpu_profile.py): a test's CPU counts the processes it started and never reaped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cpu_profile import by_file, hierarchy, report

ROOT = Path(__file__).resolve().parents[1]

BURNER = """
import subprocess, sys, time

def test_a_detached_grandchild_burns_half_a_second(tmp_path):
    done = tmp_path / "done"
    # a process in a session of its own whose parent exits at once: nobody here reaps it, as a
    # service or a daemonised worker is not reaped by the test that started it
    script = (
        "import os, sys, time\\n"
        "if os.fork(): os._exit(0)\\n"
        "end = time.process_time() + 0.5\\n"
        "while time.process_time() < end: pass\\n"
        "open(sys.argv[1], 'w').close()\\n"
    )
    subprocess.Popen([sys.executable, "-c", script, str(done)], start_new_session=True).wait()
    deadline = time.monotonic() + 30
    while not done.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)

def test_an_idle_test():
    pass
"""


def cgroups_writable() -> bool:
    return os.geteuid() == 0 and hierarchy() is not None


def test_records_sum_by_file_most_cpu_first() -> None:
    records = [
        {"nodeid": "tests/a.py::t1", "cpu_s": 1.0, "wall_s": 2.0},
        {"nodeid": "tests/b.py::t1", "cpu_s": 5.0, "wall_s": 1.0},
        {"nodeid": "tests/a.py::t2[x]", "cpu_s": 0.5, "wall_s": 1.0},
    ]
    files = by_file(records)
    assert [(f.path, f.tests, f.cpu_s, f.wall_s) for f in files] == [
        ("tests/b.py", 1, 5.0, 1.0),
        ("tests/a.py", 2, 1.5, 3.0),
    ]
    text = report(records)
    assert text.splitlines()[0] == "3 tests in 2 files: 6 CPU-seconds"
    assert text.splitlines()[2].endswith("tests/b.py") and "76.9%" in text.splitlines()[2]


@pytest.mark.skipif(not cgroups_writable(), reason="needs root and a cgroup hierarchy")
def test_a_tests_cpu_includes_a_detached_process_it_started(tmp_path: Path) -> None:
    (tmp_path / "test_burner.py").write_text(BURNER)
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\nimport cpu_profile\n\n"
        "def pytest_configure(config):\n    cpu_profile.install(config)\n"
    )
    out = tmp_path / "cpu.jsonl"
    env = {**os.environ, "REWARDHUB_CPU_PROFILE": str(out)}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(tmp_path / "test_burner.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    records = {r["nodeid"].split("::")[1]: r for r in map(json.loads, out.read_text().splitlines())}
    burner, idle = records["test_a_detached_grandchild_burns_half_a_second"], records["test_an_idle_test"]
    print(f"burner {burner['cpu_s']:.2f} CPU-s, idle {idle['cpu_s']:.3f} CPU-s")
    assert burner["cpu_s"] >= 0.45  # the grandchild's half second, which getrusage never sees
    assert idle["cpu_s"] < 0.2 and burner["worker"] == "main"
    kind = hierarchy()
    assert kind is not None and list(kind.root.glob("rewardhub-tests-main-*")) == []  # the run's group went with it
