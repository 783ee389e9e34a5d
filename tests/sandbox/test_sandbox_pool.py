"""The pool: bounded concurrency (excess work queues), warm reuse, recycling, clean handover."""

from __future__ import annotations

import threading
import time

import pytest

from rewardhub.sandbox import Limits, SandboxError, SandboxPool, SandboxSettings, decode_value


def settings(**changes) -> SandboxSettings:
    return SandboxSettings(**{"concurrency": 1, "preload": ("json",), **changes})


def test_concurrency_is_bounded_and_excess_jobs_wait():
    pool = SandboxPool(settings(concurrency=2))
    peak, lock, live = [0], threading.Lock(), [0]
    pairs = threading.Barrier(2, timeout=30)  # two jobs must be able to run at once

    def job():
        with pool.job("python", "print(1)") as running:
            with lock:
                live[0] += 1
                peak[0] = max(peak[0], live[0])
            running.setup()
            running.run()
            pairs.wait()
            with lock:
                live[0] -= 1

    try:
        threads = [threading.Thread(target=job) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert peak[0] == 2
        assert pool.describe()["live"] == 2
    finally:
        pool.close()


def test_a_warm_sandbox_serves_many_jobs_then_is_recycled():
    pool = SandboxPool(settings(recycle_after=3))
    try:
        for _ in range(7):
            assert pool.run("python", "print(1)").stdout == "1\n"
        assert pool.started == 3  # jobs 1-3, 4-6, 7
    finally:
        pool.close()


def test_each_job_starts_from_an_empty_scratch_folder():
    pool = SandboxPool(settings())
    try:
        pool.run("python", "open('left-behind', 'w').write('x')\nimport os\nos.mkdir('d')\nos.chmod('d', 0)\n")
        after = pool.run("python", "import os\nprint(sorted(os.listdir('.')))\n")
        assert after.stdout == "['main.py']\n"
        assert pool.started == 1
    finally:
        pool.close()


def test_a_closed_pool_leaves_no_sandbox_running():
    pool = SandboxPool(settings())
    pool.run("python", "print(1)")
    pool.close()
    assert pool.describe()["live"] == 0


LEAVE_A_FILE = "open('left-behind', 'w').write('x')\nopen('/dev/shm/left-behind', 'w').write('x')\nprint('left')\n"
LOOK = "import os\nprint(sorted(os.listdir('.')), os.listdir('/dev/shm'))\n"


def test_a_file_of_one_job_is_never_visible_to_the_next_one_of_several_runs():
    """A job of several runs is wiped by its own reset when it ends (``pool.run`` folds it into its run)."""
    pool = SandboxPool(settings())
    try:
        with pool.job("python", LEAVE_A_FILE) as job:
            job.setup()
            assert [job.run().stdout for _ in range(2)] == ["left\n"] * 2  # the scratch lives between runs
        with pool.job("python", LOOK) as job:
            job.setup()
            assert job.run().stdout == "['main.py'] []\n"
        assert pool.started == 1
    finally:
        pool.close()


def test_nothing_runs_in_a_job_after_its_last_run():
    pool = SandboxPool(settings())
    try:
        with pool.job("python", "print(1)") as job:
            job.setup()
            assert job.run(last=True).stdout == "1\n"
            with pytest.raises(SandboxError, match="wiped"):
                job.run()
            with pytest.raises(SandboxError, match="wiped"):
                job.fetch(["main.py"])
    finally:
        pool.close()


SHARED_MEMORY_LEFT = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
print(libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600) >= 0)
"""


@pytest.mark.parametrize("one_run", [True, False], ids=["run", "job"])
def test_a_sandbox_left_dirty_is_replaced_before_the_next_job(one_run):
    """A System V segment outlives its program: the reset says dirty, and the next job gets a fresh sandbox."""
    pool = SandboxPool(settings())
    try:
        if one_run:
            assert pool.run("python", SHARED_MEMORY_LEFT).stdout == "True\n"
        else:
            with pool.job("python", SHARED_MEMORY_LEFT) as job:
                job.setup()
                assert job.run().stdout == "True\n"
        after = pool.run("python", "print(open('/proc/sysvipc/shm').read().count(chr(10)))\n")
        assert after.stdout == "1\n"  # the table's header only
        assert pool.started == 2
    finally:
        pool.close()


HOLD_128_MB = "x = bytearray(128 << 20)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\nprint('held')\n"
THREADS = """
import threading, time
count = 0
try:
    while count < 40:
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        count += 1
except RuntimeError:
    pass
print(count)
"""


def test_one_sandboxs_cgroup_limits_follow_each_run():
    """The cgroup lives as long as its sandbox and is written only when a run's limits differ from
    the last run's: tightened, loosened and tightened again, each run gets its own."""
    pool = SandboxPool(settings())
    try:
        memory = [pool.run("python", HOLD_128_MB, limits=Limits(memory_mb=mb)).verdict for mb in (64, 512, 512, 64)]
        threads = [int(pool.run("python", THREADS, limits=Limits(max_processes=n)).stdout) for n in (10, 60, 60, 10)]
        assert memory == ["memory", "ok", "ok", "memory"]
        assert threads[0] < 10 and threads[3] < 10 and threads[1:3] == [40, 40]
        assert pool.started == 1
    finally:
        pool.close()


TWICE = "def twice(n):\n    return 2 * n\n"
CALLS = [{"kind": "call", "fn_name": "twice", "args": [n]} for n in (1, 2, 3)]


def test_a_submissions_tests_run_in_one_call_on_a_sandbox_that_is_back_when_it_returns():
    """``run_tests``: the build, every test and the sandbox's return to the pool are the pool's,
    so the code verifier judges the runs holding no sandbox."""
    pool = SandboxPool(settings())
    try:
        batch = pool.run_tests("python", TWICE, CALLS, Limits(timeout_s=5), time.monotonic() + 60)
        assert batch.build_failure is None
        assert [run.verdict for run in batch.runs] == ["ok", "ok", "ok"]
        assert [decode_value(run.record["value"]) for run in batch.runs] == [2, 4, 6]
        assert batch.sandbox["backend"] == pool.settings.backend
        assert pool.describe()["idle"] == 1 and pool.started == 1  # handed back, and warm for the next
    finally:
        pool.close()


def test_a_submission_that_does_not_build_runs_no_test():
    pool = SandboxPool(settings())
    try:
        batch = pool.run_tests(
            "c", "int main( {", [{"kind": "stdio", "stdin": ""}] * 2, Limits(), time.monotonic() + 60
        )
        assert batch.build_failure is not None and batch.build_failure.verdict == "compile_error"
        assert batch.runs == [None, None]
        assert pool.describe()["idle"] == 1
    finally:
        pool.close()


def test_the_build_and_the_tests_share_one_deadline():
    """A deadline already past when the program is built leaves every test unstarted (None)."""
    pool = SandboxPool(settings())
    try:
        batch = pool.run_tests("python", TWICE, CALLS, Limits(timeout_s=5), time.monotonic())
        assert batch.build_failure is None
        assert batch.runs == [None, None, None]
    finally:
        pool.close()
