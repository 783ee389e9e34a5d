"""The pool: bounded concurrency (excess work queues), warm reuse, recycling, clean handover."""

from __future__ import annotations

import threading

from rewardhub.sandbox import SandboxPool, SandboxSettings


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
