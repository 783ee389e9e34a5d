"""What do the system-call filter and the two-process whole test cost, next to going without them?

Side by side, in one run, alternating sides, on the same cores:

  filter    the same sandboxed run (a trivial program, and a program that starts threads and a
            subprocess, where system calls are many) in a pool with the seccomp filter and in one
            without it;
  whole     a HumanEval-shaped test whose asserts sit in a loop (50 calls of the program), run the
            way HumanEval's own harness does in our sandbox (program, test and ``check(f)`` in one
            process, passed when it exits 0), against our whole test (test in a process of its
            own, the program's functions called across a socket, passed on the test process's
            record).

Prints medians and p90 per side, the ratio, and whether the verdicts agree on right and wrong
programs (they must: only cheats tell the two whole-test ways apart).

    python bench/code_checks_cost.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rewardhub.sandbox import Limits, SandboxPool, SandboxSettings
from rewardhub.verifiers.code.testcases import parse_tests

LIMITS = Limits(timeout_s=10.0, memory_mb=512)
TRIVIAL = "print(sum(range(10)))"
BUSY = (
    "import subprocess, threading\n"
    "threads = [threading.Thread(target=sum, args=(range(1000),)) for _ in range(8)]\n"
    "[t.start() for t in threads]; [t.join() for t in threads]\n"
    "print(subprocess.run(['true']).returncode)\n"
)
TEST = (
    "def check(candidate):\n    for n in range(50):\n        assert candidate(n) == n * (n + 1) // 2\n\n"
    "check(triangle)\n"
)
RIGHT = "def triangle(n):\n    return sum(range(n + 1))\n"
WRONG = "def triangle(n):\n    return n * n\n"


def timed(action: Callable[[], bool]) -> tuple[float, bool]:
    start = time.perf_counter()
    verdict = action()
    return (time.perf_counter() - start) * 1000.0, verdict


def plain_run(pool: SandboxPool, code: str) -> Callable[[], bool]:
    return lambda: pool.run("python", code, limits=LIMITS).verdict == "ok"


def harness_style(pool: SandboxPool, program: str) -> Callable[[], bool]:
    """HumanEval's harness: one process, passed if it exits 0."""
    return lambda: pool.run("python", program + "\n" + TEST, limits=LIMITS).verdict == "ok"


def whole_test(pool: SandboxPool, program: str) -> Callable[[], bool]:
    (test,) = parse_tests({"assert": TEST})

    def run() -> bool:
        with pool.job("python", program) as job:
            job.setup()
            result = job.run(b"", LIMITS, {"mode": "check", "source": test.source, "names": list(test.names)})
            return result.ok and result.record == {"check": "passed"}

    return run


def compare(name: str, base: Callable[[], bool], ours: Callable[[], bool], rounds: int) -> None:
    base(), ours()  # warm both sides
    sides: dict[str, list[float]] = {"without": [], "with": []}
    agree = 0
    for index in range(rounds):
        order = [("without", base), ("with", ours)] if index % 2 == 0 else [("with", ours), ("without", base)]
        verdicts = {}
        for side, action in order:
            elapsed, verdicts[side] = timed(action)
            sides[side].append(elapsed)
        agree += verdicts["with"] == verdicts["without"]
    medians = {side: statistics.median(times) for side, times in sides.items()}
    p90 = {side: statistics.quantiles(times, n=10)[-1] for side, times in sides.items()}
    print(
        f"{name:42s} without {medians['without']:7.2f} ms (p90 {p90['without']:7.2f})   "
        f"with {medians['with']:7.2f} ms (p90 {p90['with']:7.2f})   "
        f"ratio {medians['with'] / medians['without']:.2f}x   verdicts agree {agree}/{rounds}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    base = SandboxSettings(backend="bwrap", concurrency=1, preload=("json", "math"))
    filtered, unfiltered = SandboxPool(base), SandboxPool(base.model_copy(update={"syscall_filter": False}))
    try:
        print("-- the system-call filter: same sandbox, without vs with --seccomp")
        compare("trivial program", plain_run(unfiltered, TRIVIAL), plain_run(filtered, TRIVIAL), args.rounds)
        compare("threads + a subprocess", plain_run(unfiltered, BUSY), plain_run(filtered, BUSY), args.rounds)
        print("-- a loop of asserts: HumanEval's one-process harness vs our two-process whole test")
        for label, program in (("right program", RIGHT), ("wrong program", WRONG)):
            compare(label, harness_style(filtered, program), whole_test(filtered, program), args.rounds)
    finally:
        filtered.close()
        unfiltered.close()


if __name__ == "__main__":
    main()
