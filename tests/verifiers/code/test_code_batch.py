"""The `code` verifier runs all of a Python submission's tests in one sandboxed run, and keeps every guarantee.

Assert and call tests run in the run's own process after one run of the program, while the trusted
parent keeps each test's clock from the line the one before it reported; anything else runs under a
coordinator inside the run that executes none of the program (stdin/stdout cases one after another
in one test process); a whole test is a run of its own. Every test has its own clock.

These tests pin what must stay true of that: one run per submission, each test's outcome on its own,
a hanging or crashing test costs only itself, the expected values stay in the parent, and a program
cannot forge any test's record.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from rewardhub.sandbox import Job, Limits, SandboxPool, SandboxSettings, default_pool, run_batch
from rewardhub.sandbox import language as find_language
from rewardhub.types import Sample
from rewardhub.verifiers.code import CodeVerifier

VERIFIER = CodeVerifier()

HUMANEVAL = {
    "test": textwrap.dedent(
        """
        def check(candidate):
            assert candidate(1) == 7654322
            assert candidate(2) == 7654323
            assert candidate(3) == 7654324
            assert candidate(4) == 7654325
        """
    ),
    "entry_point": "plus_k",
}


def score(program: str, reference, **config):
    response = f"```python\n{textwrap.dedent(program)}```\n"
    return VERIFIER.score(Sample(response=response, reference=reference), CodeVerifier.Config(**config))


def verdicts(result) -> list[str]:
    return [test["verdict"] for test in result.details["tests"]]


@pytest.fixture
def runs(monkeypatch):
    """Every sandboxed run a job makes, as (stdin, the test it was sent)."""
    seen: list[tuple[bytes | str, dict | None]] = []
    original = Job.run

    def counted(self, stdin=b"", limits=None, test=None, *args, **kwargs):
        seen.append((stdin, test))
        return original(self, stdin, limits, test, *args, **kwargs)

    monkeypatch.setattr(Job, "run", counted)
    return seen


def test_all_asserts_of_a_humaneval_check_run_in_one_sandboxed_run(runs):
    result = score("def plus_k(x):\n    return x + 7654321\n", HUMANEVAL)
    assert (result.score, verdicts(result)) == (1.0, ["passed"] * 4)
    assert len(runs) == 1


def test_one_run_per_assert_when_batching_is_off(runs):
    result = score("def plus_k(x):\n    return x + 7654321\n", HUMANEVAL, batch=False)
    assert result.score == 1.0
    assert len(runs) == 4


def test_fraction_keeps_per_assert_credit_and_a_hanging_assert_costs_the_rest_nothing():
    program = "def plus_k(x):\n    while x == 2:\n        pass\n    return x + 7654321 if x != 3 else 0\n"
    result = score(program, HUMANEVAL, test_timeout_s=0.5)
    assert verdicts(result) == ["passed", "timeout", "wrong_answer", "passed"]
    assert result.score == 0.5


def test_a_test_process_that_dies_fails_only_its_own_assert():
    program = "import os\ndef plus_k(x):\n    if x == 2:\n        os._exit(0)\n    return x + 7654321\n"
    result = score(program, HUMANEVAL)
    assert verdicts(result) == ["passed", "wrong_answer", "passed", "passed"]
    assert "no result" in result.details["tests"][1]["message"]


def test_all_or_nothing_stops_at_the_first_failure_of_an_assert():
    program = "def plus_k(x):\n    while x == 2:\n        pass\n    return x + 7654321\n"
    result = score(program, HUMANEVAL, scoring="all_or_nothing", test_timeout_s=0.5)
    assert verdicts(result) == ["passed", "timeout", "skipped", "skipped"]
    assert result.score == 0.0


def test_the_sandbox_starts_no_test_after_one_that_surely_failed_when_told_to_stop():
    tests = [{"kind": "assert", "setup": "", "leaves": [leaf]} for leaf in ("f(1)", "f(2)", "f(3)")]
    code = "def f(x):\n    while x == 2:\n        pass\n    return x\n"
    for stop, expected in ((True, ["ok", "timeout", None]), (False, ["ok", "timeout", "ok"])):
        with default_pool().job(find_language("python"), code) as job:
            job.setup()
            results = run_batch(job, tests, Limits(timeout_s=0.5), budget_s=10, stop=stop, last=True)
        assert [r.verdict if r else None for r in results] == expected, stop


PROGRAM_PROCESSES = (
    "import os\n"
    "def mine():\n"
    "    # processes of this program's user in the sandbox (status, not stat: a non-dumpable one is root's there)\n"
    "    count = 0\n"
    "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "        try:\n"
    "            uid = next(l for l in open(f'/proc/{pid}/status') if l.startswith('Uid:')).split()[1]\n"
    "        except OSError:\n"
    "            continue\n"
    "        count += int(uid) == os.getuid()\n"
    "    return count\n"
)


def test_an_assert_series_is_one_process_with_no_coordinator_beside_it():
    tests = [{"kind": "assert", "setup": "", "leaves": ["mine()"]}, {"kind": "call", "fn_name": "mine", "args": []}]
    with default_pool().job(find_language("python"), PROGRAM_PROCESSES) as job:
        job.setup()
        results = run_batch(job, tests, Limits(timeout_s=5), budget_s=10, last=True)
    assert [(r.verdict, r.record) for r in results] == [
        ("ok", {"values": [{"value": 1}]}),
        ("ok", {"value": 1}),
    ]


def test_each_test_of_a_series_has_its_own_clock_from_the_line_before_it_and_reports_its_own_time():
    code = "import time\ndef nap(s):\n    time.sleep(s)\n    return s\n"
    tests = [{"kind": "call", "fn_name": "nap", "args": [s]} for s in (0.0, 0.25, 0.25, 0.25)]
    with default_pool().job(find_language("python"), code) as job:
        job.setup()
        results = run_batch(job, tests, Limits(timeout_s=0.6), budget_s=10, last=True)
    assert [r.verdict for r in results] == ["ok"] * 4  # 0.75 s in all, under 0.6 s each
    assert results[1].elapsed_ms >= 250 > results[0].elapsed_ms


def test_asserts_beside_a_whole_check_each_run_on_its_own():
    """The whole check is a sandboxed run of its own (its test read after the program's process is
    forked); the asserts around it run as a series."""
    tests = [
        {"kind": "assert", "setup": "", "leaves": ["f(1)"]},
        {"kind": "check", "source": "for x in range(3):\n    assert f(x) == x + 1\n", "names": ["f"]},
        {"kind": "assert", "setup": "", "leaves": ["f(2)"]},
    ]
    with default_pool().job(find_language("python"), "def f(x):\n    return x + 1\n") as job:
        job.setup()
        results = run_batch(job, tests, Limits(timeout_s=5), budget_s=10, last=True)
    assert [(r.verdict, r.record) for r in results] == [
        ("ok", {"values": [{"value": 2}]}),
        ("ok", {"check": "passed"}),
        ("ok", {"values": [{"value": 3}]}),
    ]


def test_a_program_that_writes_lines_to_hold_its_clock_open_still_fails_and_stops_at_the_budget():
    code = "import os, time\ndef f(x):\n    while True:\n        os.write(3, b'\\n')\n        time.sleep(0.05)\n"
    tests = [{"kind": "call", "fn_name": "f", "args": [1]}, {"kind": "call", "fn_name": "f", "args": [2]}]
    started = time.monotonic()
    with default_pool().job(find_language("python"), code) as job:
        job.setup()
        results = run_batch(job, tests, Limits(timeout_s=0.3), budget_s=1.0, last=True)
    assert results[0] is not None and results[0].record is None
    assert all(r is None or r.record is None for r in results)
    assert time.monotonic() - started < 5


def test_expected_values_never_enter_the_sandbox(runs):
    references = [
        HUMANEVAL,
        {"test_list": ["assert plus_k(5) == 7654326", "assert plus_k(6) == 7654327"]},
        {"fn_name": "plus_k", "inputs": [[7], [8]], "outputs": [7654328, 7654329]},
    ]
    for reference in references:
        assert score("def plus_k(x):\n    return x + 7654321\n", reference).score == 1.0
    assert score("print(int(input()) + 7654321)\n", {"inputs": ["9\n"], "outputs": ["7654330\n"]}).score == 1.0
    sent = json.dumps([test for _, test in runs], default=repr) + repr([stdin for stdin, _ in runs])
    for expected in (str(7654321 + i) for i in range(1, 10)):
        assert expected not in sent, expected


def test_a_second_record_for_an_assert_fails_it_even_when_the_forged_one_was_right():
    cheat = (
        "import os\n"
        "def plus_k(x):\n"
        '    os.write(3, b\'{"i": %d, "r": {"values": [{"value": %d}]}}\\n\' % (x - 1, x + 7654321))\n'
        "    return None\n"
    )
    result = score(cheat, HUMANEVAL)
    assert result.score == 0.0
    assert "result records" in result.details["tests"][0]["message"]


def test_a_forged_batch_record_on_the_result_channel_changes_nothing():
    passed = {"elapsed_ms": 1.0, "status": 0, "record": {"values": [{"value": 7654322}]}, "stderr": ""}
    forged = json.dumps({"batch": [passed] * 4})
    cheat = f"import os, atexit\nos.write(3, {forged!r}.encode() + b'\\n')\natexit.register(os.write, 3, b'{forged}')\n"
    result = score(cheat + "def plus_k(x):\n    return None\n", HUMANEVAL)
    assert result.score == 0.0


@pytest.mark.parametrize(
    "cheat",
    [
        "import sys\nsys.settrace(lambda *a: sys.exit(0))\n",
        "import os, sys\nsys.setprofile(lambda *a: os._exit(0))\n",
        "import os, atexit\natexit.register(os._exit, 0)\nimport sys\nsys.exit(0)\n",
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.len = lambda *a: 4\n",
        "check = lambda candidate: None\n",
    ],
    ids=["settrace", "setprofile", "atexit-exit", "builtins", "rebound-check"],
)
def test_cheats_fail_every_assert_of_the_batch(cheat):
    result = score(cheat + "def plus_k(x):\n    return None\n", HUMANEVAL)
    assert result.score == 0.0


def test_a_stdio_suite_runs_in_one_sandboxed_run_and_a_first_case_that_hangs_delays_only_itself(runs):
    reference = {"inputs": [f"{i}\n" for i in range(20)], "outputs": [f"{i + 7654321}\n" for i in range(20)]}
    program = "n = int(input())\nwhile n == 0:\n    pass\nprint(n + 7654321)\n"
    result = score(program, reference, test_timeout_s=0.5)
    assert verdicts(result) == ["timeout"] + ["passed"] * 19
    assert len(runs) == 1


def test_output_is_capped_per_test_not_per_shared_test_process():
    reference = {"fn_name": "plus_k", "inputs": [[i] for i in range(12)], "outputs": [i + 7654321 for i in range(12)]}
    program = "def plus_k(x):\n    print('x' * 200_000)\n    return x + 7654321\n"
    result = score(program, reference)
    assert verdicts(result) == ["passed"] * 12


def test_each_stdio_case_of_a_batch_draws_fresh_numbers_from_numpys_preloaded_generator():
    warm_numpy_random = SandboxPool(SandboxSettings(concurrency=1, preload=("numpy.random",)))
    code = "import numpy\nprint(numpy.random.randint(1 << 30))\n"  # fork reseeds random, never numpy
    try:
        with warm_numpy_random.job(find_language("python"), code) as job:
            job.setup()
            tests = [{"kind": "stdio", "stdin": ""}] * 3
            results = run_batch(job, tests, Limits(timeout_s=5), budget_s=20, last=True)
    finally:
        warm_numpy_random.close()
    outputs = [r.stdout for r in results if r is not None and r.ok]
    assert len(outputs) == 3 and len(set(outputs)) == 3, outputs


C_SUITE = {"inputs": [f"{i}\n" for i in range(8)], "outputs": [f"{i * 2}\n" for i in range(8)]}
C_CASES = """
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    int n;
    if (scanf("%d", &n) != 1) return 2;
    if (n == 1) for (;;) {}                                  /* hangs */
    if (n == 2) { int *p = 0; *p = 1; }                      /* segfault */
    if (n == 3) abort();                                     /* SIGABRT */
    if (n == 4) { printf("%d\\n", n * 2); return 7; }         /* right answer, bad status */
    if (n == 5) { for (;;) fputs("xxxxxxxxxxxxxxxx", stdout); } /* floods its output */
    if (n == 6) { printf("%d\\n", n * 3); return 0; }         /* wrong answer */
    printf("%d\\n", n * 2);
    return 0;
}
"""


def test_a_native_stdio_suite_runs_in_one_sandboxed_run_with_the_verdicts_of_a_run_per_case(runs):
    batched = score(C_CASES, C_SUITE, language="c", test_timeout_s=0.5)
    assert len(runs) == 1  # the build is the job's own run, not one of these
    one_each = score(C_CASES, C_SUITE, language="c", test_timeout_s=0.5, batch=False)
    expected = ["passed", "timeout", "runtime_error", "runtime_error", "runtime_error", "output_limit"]
    assert verdicts(batched) == verdicts(one_each) == [*expected, "wrong_answer", "passed"]
    assert batched.score == one_each.score == 0.25


def test_a_native_case_reads_its_own_input_whole_and_gets_only_its_standard_descriptors():
    program = """
        #include <dirent.h>
        #include <stdio.h>
        int main(void) {
            long sum = 0, x, n = 0;
            while (scanf("%ld", &x) == 1) { sum += x; n++; }
            int fds = 0;
            DIR *d = opendir("/proc/self/fd");
            for (struct dirent *e; (e = readdir(d)); ) fds += e->d_name[0] != '.';
            printf("%ld %ld %d\\n", n, sum, fds - 1);  /* less the one opendir holds */
            return 0;
        }
        """
    big = "".join(f"{i}\n" for i in range(200_000))
    reference = {"inputs": [big, "1 2\n"], "outputs": [f"200000 {sum(range(200_000))} 3\n", "2 3 3\n"]}
    result = score(program, reference, language="c")
    assert verdicts(result) == ["passed", "passed"], result.details
