"""How fast is a fully isolated sandboxed run, next to a bare subprocess with no isolation at all?

Side by side, in one run on this machine:

  (a) bare: ``subprocess.run([python, "-c", code])``, the usual unisolated baseline;
  (b) ours: the same code through the sandbox pool (bubblewrap, cgroups, a fresh fork of a warm
      interpreter per run, files written and wiped per job), which is what the ``code`` verifier
      and ``POST /v1/sandbox/run`` do.

for a trivial program, and for a submission with 10 stdin/stdout tests (ten bare processes
against one sandbox job with ten forked runs). Prints latency min/median/p99 and runs/s, then
the ratios. Goals: (b) at least 2x faster than (a) for the trivial program, and at least 3x for
the 10-test submission.

    python bench/sandbox_speed.py [--runs 20] [--submissions 5] [--backend bwrap]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from rewardhub.sandbox import Limits, SandboxPool, SandboxSettings

TRIVIAL = "print(sum(range(10)))"
SUBMISSION = "a, b = map(int, input().split())\nprint(a + b)\n"
TESTS = [(f"{i} {i * 7}\n", f"{i * 8}\n") for i in range(10)]
LIMITS = Limits(timeout_s=10.0, memory_mb=512)


def bare_trivial() -> None:
    done = subprocess.run([sys.executable, "-c", TRIVIAL], capture_output=True, check=True)
    assert done.stdout == b"45\n"


def bare_submission() -> None:
    for stdin, expected in TESTS:
        done = subprocess.run([sys.executable, "-c", SUBMISSION], input=stdin.encode(), capture_output=True, check=True)
        assert done.stdout.decode() == expected


def ours_trivial(pool: SandboxPool) -> Callable[[], None]:
    def run() -> None:
        result = pool.run("python", TRIVIAL, limits=LIMITS)
        assert (result.verdict, result.stdout) == ("ok", "45\n"), result

    return run


def ours_submission(pool: SandboxPool) -> Callable[[], None]:
    def run() -> None:
        with pool.job("python", SUBMISSION) as job:
            job.setup()
            for stdin, expected in TESTS:
                result = job.run(stdin, LIMITS)
                assert (result.verdict, result.stdout) == ("ok", expected), result

    return run


def measure(function: Callable[[], None], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def summary(name: str, times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    row = {
        "min": ordered[0] * 1e3,
        "median": statistics.median(ordered) * 1e3,
        "p99": p99 * 1e3,
        "per_s": len(times) / sum(times),
    }
    print(
        f"  {name:<34} min {row['min']:8.1f} ms   median {row['median']:8.1f} ms   p99 {row['p99']:8.1f} ms   {row['per_s']:8.1f}/s"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of the trivial program, each way")
    parser.add_argument("--submissions", type=int, default=5, help="10-test submissions, each way")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "unsafe"])
    args = parser.parse_args()

    pool = SandboxPool(SandboxSettings(backend=args.backend, concurrency=1))
    start = time.perf_counter()
    pool.warm_up()
    cold = time.perf_counter() - start
    try:
        ours_trivial(pool)()  # first job in the warm sandbox: not a steady-state number
        with pool.job("python", "pass") as job:
            details = job.details
        print(
            f"sandbox: {details}; cold start of one warm sandbox {cold * 1e3:.0f} ms (paid once per {pool.settings.recycle_after} jobs)"
        )
        print(f"python: {sys.executable}\n")

        print(f"trivial program ({args.runs} runs each)")
        bare = summary("(a) bare subprocess, no isolation", measure(bare_trivial, args.runs))
        ours = summary("(b) sandboxed (isolated)", measure(ours_trivial(pool), args.runs))
        print(f"\n10-test submission ({args.submissions} submissions each)")
        bare10 = summary("(a) 10 bare subprocesses", measure(bare_submission, args.submissions))
        ours10 = summary("(b) one sandbox job, 10 runs", measure(ours_submission(pool), args.submissions))
    finally:
        pool.close()

    trivial_ratio = bare["median"] / ours["median"]
    submission_ratio = bare10["median"] / ours10["median"]
    print("\nratios (bare median / sandboxed median; higher is better for us)")
    print(f"  trivial program:     {trivial_ratio:6.1f}x   (goal >= 2x: {'met' if trivial_ratio >= 2 else 'NOT met'})")
    print(
        f"  10-test submission:  {submission_ratio:6.1f}x   (goal >= 3x: {'met' if submission_ratio >= 3 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
