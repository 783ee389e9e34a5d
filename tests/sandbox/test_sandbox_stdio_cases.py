"""A stdin/stdout suite's cases run one after another in one test process, each as a fresh interpreter.

The contract (rewardhub.sandbox.inside.stdio_cases): every case sees what ``python main.py < case``
sees, so its stdout, its exit status and its verdict are those of a test process of its own
(``stdio_series=False``, a fork per case); whatever a case leaves behind that a reset cannot undo
ends the process, and the next case gets a fresh one.
"""

from __future__ import annotations

import textwrap

import pytest

from rewardhub.sandbox import Limits, default_pool
from rewardhub.sandbox import language as find_language
from rewardhub.sandbox.batch import run_batch


def run_cases(program: str, stdins: list[str], series: bool = True, timeout_s: float = 5.0, **limits):
    with default_pool().job(find_language("python"), textwrap.dedent(program)) as job:
        job.setup()
        tests = [{"kind": "stdio", "stdin": stdin} for stdin in stdins]
        return run_batch(job, tests, Limits(timeout_s=timeout_s, **limits), budget_s=60, last=True, stdio_series=series)


def outcomes(results) -> list[tuple[str, int | None, str]]:
    return [(r.verdict, r.exit_code, r.stdout) for r in results]


def test_the_cases_share_one_process_and_each_reads_its_own_input_and_writes_its_own_output():
    program = "import os\nprint(os.getpid(), int(input()) * 2)\n"
    shared = run_cases(program, [f"{i}\n" for i in range(5)])
    own = run_cases(program, [f"{i}\n" for i in range(5)], series=False)
    assert [r.stdout.split()[1] for r in shared] == [str(2 * i) for i in range(5)]
    assert len({r.stdout.split()[0] for r in shared}) == 1
    assert len({r.stdout.split()[0] for r in own}) == 5


PROBES = {
    "standard streams as the interpreter makes them": """
        import sys
        s = sys.stdin
        print(s.encoding, s.errors, s.name, sys.stdout.name, sys.stderr.name, sys.stderr.errors)
        print(s.line_buffering, sys.stdout.line_buffering, sys.stderr.line_buffering, sys.stdout.write_through)
        print(s is sys.__stdin__, sys.stdout is sys.__stdout__, s.isatty(), repr(s.read()))
        """,
    "fd 0 is a pipe holding exactly the case's input": """
        import os, stat
        print(stat.S_ISFIFO(os.fstat(0).st_mode), os.fstat(0).st_size, os.read(0, 1 << 16), os.read(0, 10))
        """,
    "open(0) and sys.stdin.buffer": """
        import sys
        first = sys.stdin.buffer.readline()
        print(first, open(0).read().split())
        """,
    "a fresh __main__": """
        import sys
        print(__name__, __file__ == sys.argv[0], sorted(k for k in globals() if not k.startswith('__')))
        print(sys.modules['__main__'].__dict__ is globals(), 'leak' in dir(sys.modules['__main__']))
        leak = 1
        """,
    "process state a case changes is put back": """
        import builtins, os, signal, sys
        print(sys.getrecursionlimit(), sys.get_int_max_str_digits(), os.getcwd(), os.environ.get('LEAK'))
        print(getattr(builtins, 'leak', None), signal.getsignal(signal.SIGINT), sys.gettrace(), oct(os.umask(0o077)))
        print(sys.argv, sys.path[0], sys.excepthook is sys.__excepthook__, signal.getitimer(signal.ITIMER_REAL))
        sys.setrecursionlimit(50000); sys.set_int_max_str_digits(100000); os.chdir('/')
        os.environ['LEAK'] = '1'; builtins.leak = 1; signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.argv.append('more'); sys.path.insert(0, '/nowhere'); sys.excepthook = print
        signal.setitimer(signal.ITIMER_REAL, 100)
        """,
    "a rebound input() does not reach the next case": """
        import builtins
        x = input()
        builtins.input = lambda *a: 'forged'
        print(x)
        """,
    "exit() closes stdin; the next case has its own": """
        print(input())
        exit()
        """,
    "unflushed output is lost with os._exit, as Python loses it": """
        print(input())
        import os
        os._exit(0)
        """,
    "sys.exit(3) after output": """
        print(input())
        import sys
        sys.exit(3)
        """,
    "an uncaught exception after output": """
        print(input())
        raise ValueError('no')
        """,
    "a non-daemon thread is waited for": """
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.05), print('late', input()))).start()
        """,
    "atexit runs after the program, once per case": """
        import atexit
        atexit.register(print, 'bye')
        print(input())
        """,
}


@pytest.mark.parametrize("program", list(PROBES.values()), ids=list(PROBES))
def test_each_case_sees_what_a_process_of_its_own_sees(program):
    stdins = ["7\r\n8\n", "1\n", "22 33\n", ""]
    shared, own = run_cases(program, stdins), run_cases(program, stdins, series=False)
    assert outcomes(shared) == outcomes(own)
    assert all(r.verdict != "sandbox_error" for r in shared), [r.stderr for r in shared]


def test_each_case_draws_fresh_random_numbers():
    results = run_cases("import random\nprint(random.getrandbits(64))\n", [""] * 4)
    assert len({r.stdout for r in results}) == 4


RETIRED = {
    "a daemon thread still running": (
        """
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.3), print('late', flush=True)), daemon=True).start()
        print(input())
        """,
        "thread",
    ),
    "a child still running": (
        """
        import os, time
        if os.fork() == 0:
            time.sleep(0.3)
            print('orphan', flush=True)
            os._exit(0)
        print(input())
        """,
        "child",
    ),
    "a grandchild orphaned by a double fork": (
        """
        import os, time
        pid = os.fork()
        if pid == 0:
            if os.fork() == 0:
                time.sleep(0.3)
                print('orphan', flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        print(input())
        """,
        "child",
    ),
    "a lowered resource limit": (
        """
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))
        print(input())
        """,
        "resource limit",
    ),
    "a replaced standard descriptor": (
        """
        import os
        print(input(), flush=True)
        os.dup2(os.open('/dev/null', os.O_WRONLY), 2)
        """,
        "descriptor",
    ),
    "memory kept past the case": (
        """
        import sys
        sys.kept = bytearray(200 << 20)
        print(input())
        """,
        "memory",
    ),
    "descriptors left open": (
        """
        import sys
        sys.kept = [open('/dev/null') for _ in range(40)]
        print(input())
        """,
        "descriptors",
    ),
}


@pytest.mark.parametrize("program, reason", list(RETIRED.values()), ids=list(RETIRED))
def test_a_case_that_leaves_what_a_reset_cannot_undo_ends_its_process(program, reason):
    results = run_cases(program, ["1\n", "2\n", "3\n"], memory_mb=1024)
    assert outcomes(results) == [("ok", 0, f"{i}\n") for i in (1, 2, 3)]
    assert all(reason in " ".join(r.details["process_retired"]) for r in results), [r.details for r in results]


def test_a_clean_case_keeps_its_process():
    results = run_cases("print(input())\n", ["1\n", "2\n"])
    assert all("process_retired" not in r.details for r in results)


def test_a_case_that_ends_its_process_fails_alone_and_a_fresh_process_runs_the_next():
    program = "import os\nn = int(input())\nprint(n, os.getpid(), flush=True)\nif n == 1:\n    os._exit(9)\n"
    results = run_cases(program, ["0\n", "1\n", "2\n"])
    assert [(r.verdict, r.exit_code) for r in results] == [("ok", 0), ("runtime_error", 9), ("ok", 0)]
    pids = [r.stdout.split()[1] for r in results]
    assert pids[0] == pids[1] != pids[2]


def test_a_case_that_hangs_times_out_alone_and_the_rest_do_not_wait_for_it():
    program = "n = int(input())\nwhile n == 0:\n    pass\nprint(n)\n"
    results = run_cases(program, [f"{i}\n" for i in range(6)], timeout_s=0.5)
    assert [r.verdict for r in results] == ["timeout"] + ["ok"] * 5
    assert [r.stdout for r in results[1:]] == [f"{i}\n" for i in range(1, 6)]


def test_output_is_capped_per_case():
    program = "print('x' * 300_000)\nprint(input())\n"
    results = run_cases(program, [f"{i}\n" for i in range(8)], max_output_bytes=400_000)
    assert [r.verdict for r in results] == ["ok"] * 8


def test_a_large_input_reaches_the_case_whole():
    big = "".join(f"{i}\n" for i in range(300_000))  # about 2 MB: many times a pipe's capacity
    program = "import sys\ndata = sys.stdin.buffer.read().split()\nprint(len(data), sum(map(int, data)))\n"
    results = run_cases(program, [big, "1\n2\n"])
    assert [r.stdout for r in results] == [f"300000 {sum(range(300_000))}\n", "2 3\n"]


def test_a_forged_record_fails_its_case_and_the_next_one():
    forger = """
        import os
        n = int(input())
        if n == 1:
            os.write(3, b'{"i": 1, "r": {"exit": 0}}\\n')
        print(n)
        """
    results = run_cases(forger, ["0\n", "1\n", "2\n", "3\n"])
    assert [r.verdict for r in results] == ["ok", "runtime_error", "runtime_error", "ok"]
    assert "result records" in results[1].details["record_problem"]


def test_a_case_whose_large_globals_go_with_it_keeps_its_process():
    program = "table = bytearray(150 << 20)\nprint(len(table) >> 20, input())\n"
    results = run_cases(program, ["1\n", "2\n", "3\n"], memory_mb=1024)
    assert [r.stdout for r in results] == ["150 1\n", "150 2\n", "150 3\n"]
    assert all("process_retired" not in r.details for r in results), [r.details for r in results]


def test_a_lone_case_runs_in_a_process_of_its_own():
    """A series of one would cost its setup and an extra process; from two cases on, it saves forks."""
    program = "import os\ntry:\n    os.fstat(4)\n    print('series')\nexcept OSError:\n    print('alone')\n"
    assert [r.stdout for r in run_cases(program, [""])] == ["alone\n"]
    assert [r.stdout for r in run_cases(program, ["", ""])] == ["series\n", "series\n"]
