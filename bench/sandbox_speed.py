"""What does isolation cost? The sandbox beside a bare toolchain run and beside a warm, unisolated pool.

Side by side, in one run, on the same cores, sides alternating, medians:

  (a) bare: ``subprocess.run`` of the language's own toolchain in a temporary folder, no isolation
      (``python -c``; ``g++ ... && ./main``; ``javac`` then ``java``; ``go build``; ...);
  (w) warm, Python only: a pre-forked interpreter pool with no walls. Worker processes that imported
      what the sandbox preloads, once; each run is a fresh ``fork`` of one, its stdin, stdout and stderr through
      pipes, an uncaught exception's traceback on stderr: what our sandbox does, minus the
      namespaces, cgroups, uid change and the wipe between jobs. The ratio (b)/(w) prices isolation
      itself (goal: within 1.5x);
  (b) ours: ``SandboxPool.run`` (bubblewrap, cgroups, a fork of a warm server per run, files written
      and wiped per job, builds kept by source hash), what ``/v1/sandbox/run`` and ``/run_code`` do.

Three parts:

1. **every language**: a new submission (compile and run; bare compiles too) and the same
   submission again (bare reruns its binary; ours reuses the cached build), per language;
2. **Python**: a trivial program, and a 10-test stdin/stdout submission, (a) vs (w) vs (b);
3. **a HumanEval-sized batch**: 164 submissions, each its function plus an all-or-nothing assert
   check, some wrong on purpose, run with as many at once as there are cores: 164 bare processes
   vs the warm pool vs the sandbox (goal: (b) at least 3x faster than (a)).

Every side's verdicts are compared (stdout, or pass/fail) and the agreement is printed.

The headline comparisons go to ``bench/results/sandbox_speed.json``, the rows of the benchmark table
(``bench/run_all.py``): parts 2 and 3 against the warm pool (what isolation costs), and part 3
against bare processes. Their ratio is the other side's median time over the sandbox's (above 1:
the sandbox is faster; isolation's price (b)/(w) is its inverse, in the note).

    python bench/sandbox_speed.py [--rounds 7] [--batch-rounds 3] [--backend bwrap] [--languages go,java]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rewardhub.sandbox import LANGUAGES, Limits, SandboxPool, SandboxSettings, language
from rewardhub.sandbox.isolation import PROGRAM_ENV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402

LIMITS = Limits(timeout_s=20.0, memory_mb=512)
STDIN = "20 22\n"
ADD = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(){long a,b; scanf("%ld %ld",&a,&b); printf("%ld\\n", a+b);}\n',
    "cpp": '#include <iostream>\nint main(){long long a,b; std::cin>>a>>b; std::cout<<a+b<<"\\n";}\n',
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "typescript": "const t: string = require('fs').readFileSync(0, 'utf8');\nconst [a, b] = t.trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n',
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n",
    "rust": 'use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!("{}", v[0] + v[1]); }\n',
    "bash": "read -r a b\necho $((a + b))\n",
}
COMMENT = {"python": "#", "bash": "#"}
"""How each language starts a line comment (default ``//``): a fresh comment makes a fresh submission."""


# --- (a) bare toolchains ----------------------------------------------------------------------


def bare_commands(lang: str) -> tuple[list[str] | None, list[str]]:
    """The compile and run command lines a user would type, with the same flags the sandbox uses."""
    chosen = language(lang)
    if chosen.in_process:
        return None, [sys.executable, chosen.source]
    run = list(chosen.run_argv(LIMITS))
    return (list(chosen.compile) if chosen.compile else None), run


def bare_env(lang: str, directory: str, compiling: bool) -> dict[str, str]:
    chosen = language(lang)
    extra = dict(chosen.compile_env) if compiling else chosen.run_env(LIMITS)
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8", **extra}


class BareProject:
    """One submission in a temporary folder, built (if it must be) and run by its toolchain."""

    def __init__(self, lang: str, code: str) -> None:
        self.lang = lang
        self.directory = tempfile.mkdtemp(prefix="bench-bare-")
        with open(os.path.join(self.directory, language(lang).source), "w") as handle:
            handle.write(code)

    def build(self) -> bool:
        compile_argv, _ = bare_commands(self.lang)
        if compile_argv is None:
            return True
        env = bare_env(self.lang, self.directory, compiling=True)
        return subprocess.run(compile_argv, cwd=self.directory, env=env, capture_output=True).returncode == 0

    def run(self, stdin: str) -> str:
        _, run_argv = bare_commands(self.lang)
        env = bare_env(self.lang, self.directory, compiling=False)
        done = subprocess.run(run_argv, cwd=self.directory, env=env, input=stdin.encode(), capture_output=True)
        return done.stdout.decode()

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


# --- (w) a warm, unisolated, pre-forked interpreter pool ----------------------------------------

WARM_WORKER = r"""
import json, linecache, os, select, struct, sys, traceback

for name in sys.argv[1].split(","):  # the sandbox's own preload list
    try:
        __import__(name)
    except ImportError:
        pass
requests, answers = os.fdopen(0, "rb", buffering=0), os.fdopen(1, "wb", buffering=0)


def recv():
    head = requests.read(4)
    return json.loads(requests.read(struct.unpack("!I", head)[0])) if len(head) == 4 else None


def run(code):
    status = 1
    try:
        linecache.cache["main.py"] = (len(code), None, code.splitlines(True), "main.py")  # source in tracebacks
        exec(compile(code, "main.py", "exec"), {"__name__": "__main__"})
        status = 0
    except SystemExit as exc:
        status = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # what the interpreter prints for an uncaught exception, without this frame
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
    return status


def collect(fds):
    got = {fd: bytearray() for fd in fds}
    while fds:
        for fd in select.select(fds, [], [])[0]:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                got[fd] += chunk
            else:
                os.close(fd)
                fds = [other for other in fds if other != fd]
    return got


while (request := recv()) is not None:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            for fd, target in ((in_read, 0), (out_write, 1), (err_write, 2)):
                os.dup2(fd, target)
            for fd in (in_read, in_write, out_read, out_write, err_read, err_write):
                os.close(fd)
            sys.stdin, sys.stdout, sys.stderr = open(0, closefd=False), open(1, "w", closefd=False), open(2, "w", closefd=False)
            status = run(request["code"])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    for fd in (in_read, out_write, err_write):
        os.close(fd)
    os.write(in_write, request["stdin"].encode())
    os.close(in_write)
    got = collect([out_read, err_read])
    _, status = os.waitpid(pid, 0)
    data = json.dumps([os.waitstatus_to_exitcode(status), got[out_read].decode(), got[err_read].decode()]).encode()
    answers.write(struct.pack("!I", len(data)) + data)
"""
"""A lean worker: a fresh interpreter that imports what the sandbox's server preloads (the same list:
what a process has imported decides what each fork of it costs, whether or not it is walled in),
in the environment the sandbox gives programs, then forks a child per run. Its own process, not a
fork of this benchmark (whose memory would slow every fork).
Like the sandbox (and ``python -c``), it captures stdout and stderr, each through its own pipe, and
an uncaught exception prints its traceback there."""


class WarmPool:
    """``size`` pre-forked Python workers; a run takes an idle one (threads wait for one)."""

    def __init__(self, size: int, preload: tuple[str, ...]) -> None:
        argv = [sys.executable, "-I", "-c", WARM_WORKER, ",".join(preload)]
        self._workers = [
            subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=PROGRAM_ENV) for _ in range(size)
        ]
        self._idle = list(self._workers)
        self._cond = threading.Condition()

    def run(self, code: str, stdin: str = "") -> tuple[int, str, str]:
        with self._cond:
            while not self._idle:
                self._cond.wait()
            worker = self._idle.pop()
        try:
            assert worker.stdin is not None and worker.stdout is not None
            data = json.dumps({"code": code, "stdin": stdin}).encode()
            worker.stdin.write(struct.pack("!I", len(data)) + data)
            worker.stdin.flush()
            (size,) = struct.unpack("!I", worker.stdout.read(4))
            status, out, err = json.loads(worker.stdout.read(size))
            return status, out, err
        finally:
            with self._cond:
                self._idle.append(worker)
                self._cond.notify()

    def close(self) -> None:
        for worker in self._workers:
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(timeout=10)


# --- measuring --------------------------------------------------------------------------------


@dataclass
class Side:
    name: str
    run: Callable[[int], object]
    times: list[float]
    answers: list[object]


def alternate(sides: list[Side], rounds: int) -> None:
    """Each round runs every side once, in an order that rotates: no side always goes first."""
    for round_index in range(rounds):
        order = sides[round_index % len(sides) :] + sides[: round_index % len(sides)]
        for side in order:
            start = time.perf_counter()
            side.answers.append(side.run(round_index))
            side.times.append(time.perf_counter() - start)


def median_ms(side: Side) -> float:
    return statistics.median(side.times) * 1e3


@dataclass
class Measured:
    medians: dict[str, float]  # side name -> median ms, in the order of the sides
    agree: bool  # every side's verdicts equal the first side's


def report(title: str, sides: list[Side], ours: str = "(b)") -> Measured:
    print(f"\n{title}")
    medians = {}
    for side in sides:
        medians[side.name] = median_ms(side)
        spread = f"{min(side.times) * 1e3:8.1f} - {max(side.times) * 1e3:8.1f}"
        print(f"  {side.name:<46} median {medians[side.name]:9.1f} ms   (range {spread} ms, n={len(side.times)})")
    reference = sides[0].answers
    agree = all(side.answers == reference for side in sides[1:])
    print(f"  verdicts agree across sides: {'yes' if agree else 'NO'}")
    return Measured(medians, agree)


# --- part 1: every language -------------------------------------------------------------------


def fresh(lang: str, round_index: int, side: str) -> str:
    return ADD[lang] + f"{COMMENT.get(lang, '//')} {side} submission {round_index} {time.time_ns()}\n"


def bench_language(pool: SandboxPool, lang: str, rounds: int) -> tuple[float, float, float, float]:
    def bare_new(i: int) -> str:
        project = BareProject(lang, fresh(lang, i, "bare"))
        try:
            return project.run(STDIN) if project.build() else "build failed"
        finally:
            project.close()

    def ours_new(i: int) -> str:
        return pool.run(lang, fresh(lang, i, "ours"), stdin=STDIN, limits=LIMITS).stdout

    new = [Side("(a) bare: build + run", bare_new, [], []), Side("(b) sandboxed: build + run", ours_new, [], [])]
    alternate(new, rounds)
    first = report(f"{lang}: a new submission (build and run)", new).medians

    prebuilt = BareProject(lang, ADD[lang])
    prebuilt.build()
    pool.run(lang, ADD[lang], stdin=STDIN, limits=LIMITS)  # the build every later run reuses
    again = [
        Side("(a) bare: run the built program", lambda i: prebuilt.run(STDIN), [], []),
        Side("(b) sandboxed: same submission (cached build)", lambda i: pool.run(lang, ADD[lang], stdin=STDIN, limits=LIMITS).stdout, [], []),
    ]  # fmt: skip
    try:
        alternate(again, rounds)
    finally:
        prebuilt.close()
    second = report(f"{lang}: the same submission again", again).medians
    names = [side.name for side in new], [side.name for side in again]
    return first[names[0][0]], first[names[0][1]], second[names[1][0]], second[names[1][1]]


# --- part 2: Python, three ways ---------------------------------------------------------------

TRIVIAL = "print(sum(range(10)))"
SUBMISSION = "a, b = map(int, input().split())\nprint(a + b)\n"
TESTS = [(f"{i} {i * 7}\n", f"{i * 8}\n") for i in range(10)]


def bench_python(pool: SandboxPool, warm: WarmPool, rounds: int) -> tuple[Measured, Measured]:
    trivial = [
        Side("(a) bare: python -c", lambda i: subprocess.run([sys.executable, "-c", TRIVIAL], capture_output=True).stdout.decode(), [], []),
        Side("(w) warm pre-forked pool, no isolation", lambda i: warm.run(TRIVIAL)[1], [], []),
        Side("(b) sandboxed", lambda i: pool.run("python", TRIVIAL, limits=LIMITS).stdout, [], []),
    ]  # fmt: skip
    alternate(trivial, rounds * 3)
    first = report("python: a trivial program", trivial)

    def bare_ten(i: int) -> list[str]:
        return [
            subprocess.run([sys.executable, "-c", SUBMISSION], input=s.encode(), capture_output=True).stdout.decode()
            for s, _ in TESTS
        ]

    def warm_ten(i: int) -> list[str]:
        return [warm.run(SUBMISSION, s)[1] for s, _ in TESTS]

    def ours_ten(i: int) -> list[str]:
        with pool.job("python", SUBMISSION) as job:
            job.setup()
            return [job.run(s, LIMITS).stdout for s, _ in TESTS]

    ten = [Side("(a) 10 bare processes", bare_ten, [], []), Side("(w) warm pool, 10 forks", warm_ten, [], []), Side("(b) one sandbox job, 10 runs", ours_ten, [], [])]  # fmt: skip
    alternate(ten, rounds)
    second = report("python: a 10-test stdin/stdout submission", ten)
    return first, second


# --- part 3: a HumanEval-sized batch ------------------------------------------------------------


def humaneval_like(count: int = 164) -> list[tuple[str, bool]]:
    """``count`` submissions shaped like HumanEval's: typed imports, a function, then its check
    (``def check(candidate)`` with asserts, called on the entry point). Every 5th is wrong."""
    rows = []
    for i in range(count):
        wrong = i % 5 == 4
        body = f"    return sorted(x * {i % 7 + 1} for x in numbers)[:k] {'+ [0]' if wrong else ''}\n"
        program = (
            "from typing import List\nimport math\n\n\n"
            f"def task_{i}(numbers: List[int], k: int) -> List[int]:\n"
            f'    """Scaled by {i % 7 + 1}, sorted, the first k."""\n{body}\n\n'
            "def check(candidate):\n"
            + "".join(
                f"    assert candidate({[j, -j, 2 * j, 3]!r}, {k}) == sorted(x * {i % 7 + 1} for x in {[j, -j, 2 * j, 3]!r})[:{k}]\n"
                for j, k in ((1, 2), (5, 3), (9, 1), (0, 4))
            )
            + f"    assert math.isfinite(sum(candidate([1, 2, 3], 3)))\n\n\ncheck(task_{i})\n"
        )
        rows.append((program, not wrong))
    return rows


def bench_batch(pool: SandboxPool, warm: WarmPool, workers: int, rounds: int) -> tuple[Measured, bool]:
    """The batch's medians and agreement, and whether the sandbox's verdicts match the truth."""
    rows = humaneval_like()

    def in_threads(one: Callable[[str], bool]) -> Callable[[int], list[bool]]:
        def run(i: int) -> list[bool]:
            with ThreadPoolExecutor(workers) as threads:
                return list(threads.map(one, [program for program, _ in rows]))

        return run

    bare = in_threads(lambda p: subprocess.run([sys.executable, "-c", p], capture_output=True).returncode == 0)
    warmly = in_threads(lambda p: warm.run(p)[0] == 0)
    ours = in_threads(lambda p: pool.run("python", p, limits=LIMITS).verdict == "ok")
    sides = [Side(f"(a) 164 bare processes, {workers} at once", bare, [], []), Side("(w) warm pre-forked pool", warmly, [], []), Side("(b) sandboxed", ours, [], [])]  # fmt: skip
    alternate(sides, rounds)
    measured = report(f"a HumanEval-sized batch: 164 submissions, all-or-nothing, {workers} at once", sides)
    expected = [passes for _, passes in rows]
    truth = sides[2].answers[0] == expected
    print(f"  passes: {sum(sides[2].answers[0])}/164 (expected {sum(expected)}); match the truth: {truth}")
    return measured, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds per measurement (each side once a round)")
    parser.add_argument("--batch-rounds", type=int, default=3, help="rounds of the 164-submission batch")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "unsafe"])
    parser.add_argument("--languages", default="", help="comma-separated subset (default: every installed one)")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    chosen = [name for name in (args.languages.split(",") if args.languages else [lang.name for lang in LANGUAGES])]
    chosen = [name for name in chosen if language(name).available()]

    pool = SandboxPool(SandboxSettings(backend=args.backend, concurrency=cores))
    warm = WarmPool(cores, pool.settings.preload)
    start = time.perf_counter()
    pool.warm_up(cores)
    print(
        f"sandbox: {args.backend}, {cores} warm sandboxes (started in {(time.perf_counter() - start) * 1e3:.0f} ms); cores: {cores}"
    )
    print(f"python: {sys.executable}")
    try:
        pool.run("python", "pass")  # first job of a sandbox: not a steady-state number
        warm.run("pass")
        rows = {lang: bench_language(pool, lang, args.rounds) for lang in chosen}
        trivial_part, ten_part = bench_python(pool, warm, args.rounds)
        batch_part, batch_truth = bench_batch(pool, warm, cores, args.batch_rounds)
    finally:
        pool.close()
        warm.close()

    print("\nsummary (medians; ratio = other side / sandboxed, above 1 means the sandbox is faster)")
    print(
        f"  {'language':<11} {'bare new':>10} {'ours new':>10} {'ratio':>6}   {'bare again':>10} {'ours again':>10} {'ratio':>6}"
    )
    for lang, (bare_new, ours_new, bare_again, ours_again) in rows.items():
        print(
            f"  {lang:<11} {bare_new:8.1f}ms {ours_new:8.1f}ms {bare_new / ours_new:6.2f}   "
            f"{bare_again:8.1f}ms {ours_again:8.1f}ms {bare_again / ours_again:6.2f}"
        )
    trivial, ten, batch = trivial_part.medians, ten_part.medians, batch_part.medians
    names = list(trivial)
    isolation = trivial[names[2]] / trivial[names[1]]
    ten_isolation = ten[list(ten)[2]] / ten[list(ten)[1]]
    batch_names = list(batch)
    batch_speedup = batch[batch_names[0]] / batch[batch_names[2]]
    print(
        f"\n  isolation's price, trivial program (b)/(w):   {isolation:5.2f}x  (goal <= 1.5x: {'met' if isolation <= 1.5 else 'NOT met'})"
    )
    print(
        f"  isolation's price, 10-test submission (b)/(w): {ten_isolation:5.2f}x  (goal <= 1.5x: {'met' if ten_isolation <= 1.5 else 'NOT met'})"
    )
    print(f"  bare / sandboxed, trivial program:            {trivial[names[0]] / trivial[names[2]]:5.2f}x")
    print(
        f"  HumanEval-sized batch, bare (a) / ours (b):   {batch_speedup:5.2f}x  (goal >= 3x: {'met' if batch_speedup >= 3 else 'NOT met'})"
    )
    print(f"  HumanEval-sized batch, (b)/(w):               {batch[batch_names[2]] / batch[batch_names[1]]:5.2f}x")

    def row(case: str, baseline: str, part: Measured, other: int, unit: str, note: str) -> dict[str, object]:
        """One table row: side ``other`` against the sandbox (the last side), by median time."""
        medians = list(part.medians.values())
        theirs, ours = medians[other], medians[-1]
        agree = f"verdicts agree across sides: {'yes' if part.agree else 'NO'}"
        return {
            "case": case,
            "baseline": baseline,
            "baseline_value": round(theirs, 1),
            "ours_value": round(ours, 1),
            "unit": unit,
            "ratio": round(theirs / ours, 2),
            "note": f"{note}; {agree}",
        }

    def price(part: Measured) -> str:
        medians = list(part.medians.values())
        return f"ratio = pool / sandbox time; isolation's price (b)/(w) {medians[2] / medians[1]:.2f}x"

    pool_name = "warm pre-forked Python pool, no isolation"
    batch_case = f"a HumanEval-sized batch, 164 submissions, {cores} at once"
    truth = f"sandbox's verdicts match the truth: {batch_truth}"
    write_rows(
        "sandbox_speed",
        [
            row("python, a trivial program", pool_name, trivial_part, 1, "ms/run",
                f"{price(trivial_part)} (goal <= 1.5x: {'met' if isolation <= 1.5 else 'NOT met'})"),
            row("python, a 10-test stdin/stdout submission", pool_name, ten_part, 1, "ms/submission",
                f"{price(ten_part)} (goal <= 1.5x: {'met' if ten_isolation <= 1.5 else 'NOT met'})"),
            row(batch_case, pool_name, batch_part, 1, "ms/batch", f"{price(batch_part)}; {truth}"),
            row(batch_case, f"164 bare `python -c` processes, {cores} at once", batch_part, 0, "ms/batch",
                f"ratio = bare / sandbox time (goal >= 3x: {'met' if batch_speedup >= 3 else 'NOT met'}); {truth}"),
        ],
    )  # fmt: skip


if __name__ == "__main__":
    main()
