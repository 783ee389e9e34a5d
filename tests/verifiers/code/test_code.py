"""The `code` verifier: test formats, scoring, cheats that must fail, and sandbox failures that must be masked."""

from __future__ import annotations

import textwrap
import time
from contextlib import contextmanager
from importlib.metadata import entry_points

import psutil
import pytest

import rewardhub.verifiers.code.verifier as code_module
from rewardhub.errors import VerifierError
from rewardhub.sandbox import RunResult, SandboxPool, SandboxSettings, SandboxUnavailable
from rewardhub.sandbox import language as find_language
from rewardhub.types import Sample
from rewardhub.verifiers.code import CodeVerifier, last_code_block

VERIFIER = CodeVerifier()
SANDBOX_UIDS = range(SandboxSettings().uid_base, SandboxSettings().uid_base + SandboxSettings().uid_count)


@pytest.fixture(autouse=True)
def host_unchanged():
    """Whatever a program did, no process of a sandbox uid is left on the host afterwards."""
    yield
    deadline = time.monotonic() + 3.0
    while _program_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _program_processes() == []


def _program_processes() -> list[int]:
    return [
        p.pid
        for p in psutil.process_iter(["uids", "status"])
        if p.info["uids"] and p.info["uids"].real in SANDBOX_UIDS and p.info["status"] != psutil.STATUS_ZOMBIE
    ]


def score(program: str, reference, lang: str = "python", **config):
    response = f"Here is my solution.\n```{lang}\n{textwrap.dedent(program)}```\n"
    return VERIFIER.score(Sample(response=response, reference=reference), CodeVerifier.Config(**config))


def verdicts(result) -> list[str]:
    return [test["verdict"] for test in result.details["tests"]]


DOUBLE = {"inputs": ["1\n", "2\n", "5\n"], "outputs": ["2\n", "4\n", "10\n"]}
ADD = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]}


def test_registered_by_entry_point_as_a_code_verifier():
    (entry,) = [ep for ep in entry_points(group="rewardhub.verifiers") if ep.name == "code"]
    assert entry.load() is CodeVerifier
    assert (CodeVerifier.name, CodeVerifier.kind) == ("code", "code")


def test_last_code_block_wins():
    assert last_code_block("```python\nfirst\n```\ntext\n```cpp\nsecond\n```") == ("cpp", "second\n")
    assert last_code_block("```python\nunterminated") is None


def test_stdin_stdout_score_is_the_pass_fraction():
    result = score("print(int(input()) * 2)\n", {"inputs": ["1\n", "2\n"], "outputs": ["2\n", "5\n"]})
    assert (result.status, result.score, verdicts(result)) == ("ok", 0.5, ["passed", "wrong_answer"])


def test_all_or_nothing_stops_at_the_first_failure():
    result = score("print(int(input()) * 2)\n", {**DOUBLE, "outputs": ["2\n", "5\n", "10\n"]}, scoring="all_or_nothing")
    assert result.score == 0.0
    assert verdicts(result) == ["passed", "wrong_answer", "skipped"]


def test_a_program_slow_on_every_test_still_gets_a_score_within_the_budget():
    result = score("import time\ntime.sleep(60)\n", DOUBLE, test_timeout_s=0.5, total_timeout_s=0.2)
    assert (result.status, result.score) == ("ok", 0.0)
    assert verdicts(result) == ["timeout", "skipped", "skipped"]


def test_max_tests_and_stop_on_failure():
    limited = score("print(int(input()) * 2)\n", {**DOUBLE, "outputs": ["2\n", "4\n", "11\n"]}, max_tests=2)
    stopped = score("print(0)\n", DOUBLE, stop_on_failure=True)
    assert (limited.score, limited.details["total"]) == (1.0, 2)
    assert verdicts(stopped) == ["wrong_answer", "skipped", "skipped"]


def test_function_call_tests_including_leetcode_style():
    plain = score("def add(a, b):\n    return a + b\n", ADD)
    leetcode = score("class Solution:\n    def add(self, a, b):\n        return a + b\n", ADD)
    assert plain.score == leetcode.score == 1.0


def test_function_results_compare_like_apps():
    result = score(
        "def f(x):\n    return (x, x)\n", {"fn_name": "f", "inputs": [[1], [2]], "outputs": [[1, 1], [[2, 2]]]}
    )
    assert result.score == 1.0


def test_mbpp_asserts():
    result = score(
        "def f(x):\n    return x * 2\n",
        {"assert": "assert f(1) == 2\nassert f(2) == 5\nassert abs(f(1.5) - 3) < 1e-9\n"},
    )
    assert verdicts(result) == ["passed", "wrong_answer", "passed"]


def test_humaneval_check_function():
    tests = "def check(candidate):\n    assert candidate([1, 2]) == 3\n    assert candidate([]) == 0\n"
    result = score("def total(xs):\n    return sum(xs)\n", {"assert": tests, "entry_point": "total"})
    assert result.score == 1.0


def test_other_languages_on_stdin_stdout():
    program = '#include <cstdio>\nint main(){int n; std::scanf("%d", &n); std::printf("%d\\n", 2 * n);}\n'
    result = score(program, DOUBLE, lang="cpp", language="auto")
    assert (result.score, result.details["language"]) == (1.0, "cpp")


def test_a_program_that_does_not_compile_fails_every_test():
    result = score("int main( {\n", DOUBLE, lang="c", language="auto")
    assert (result.status, result.score, verdicts(result)) == ("ok", 0.0, ["compile_error"] * 3)


def test_a_python_syntax_error_fails_every_test_without_rerunning():
    result = score("def f(:\n", ADD)
    assert verdicts(result) == ["compile_error", "compile_error"]


def test_no_code_block_scores_zero_as_a_judgement():
    result = VERIFIER.score(Sample(response="I think the answer is 4.", reference=DOUBLE), CodeVerifier.Config())
    assert (result.status, result.score) == ("ok", 0.0)


def test_timeouts_and_memory_are_per_test_verdicts():
    result = score(
        "import sys\nn = int(input())\nif n == 1:\n    while True: pass\nif n == 2:\n    x = bytearray(1 << 30)\nprint(n * 2)\n",
        DOUBLE,
        test_timeout_s=1.0,
        memory_mb=64,
    )
    assert verdicts(result) == ["timeout", "memory", "passed"]


# --- the harness cannot be fooled ---------------------------------------------------------------


def test_an_object_equal_to_everything_fails_a_call_test():
    cheat = "class Always:\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Always()\n"
    result = score(cheat, ADD)
    assert result.score == 0.0
    assert "NotPlain" in result.details["tests"][0]["message"]


def test_an_object_equal_to_everything_fails_an_assert_test():
    cheat = "class Always:\n    def __eq__(self, other):\n        return True\n    __ne__ = __lt__ = __gt__ = __eq__\ndef f(x):\n    return Always()\n"
    result = score(cheat, {"assert": "assert f(1) == 2\nassert not (f(1) != 2)\n"})
    assert result.score == 0.0


def test_an_int_subclass_that_equals_everything_fails():
    cheat = (
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Sneaky(0)\n"
    )
    assert score(cheat, ADD).score == 0.0


def test_reading_the_expected_value_off_the_callers_frame_fails():
    cheat = textwrap.dedent("""
        import sys
        def f(x):
            frame = sys._getframe(1)
            while frame is not None:
                for const in frame.f_code.co_consts:
                    if isinstance(const, int) and const not in (x, 0, 1):
                        return const
                frame = frame.f_back
            return None
    """)
    assert score(cheat, {"assert": "assert f(1) == 12345\n"}).score == 0.0


def test_rebinding_builtins_does_not_rewrite_the_tests():
    cheat = (
        "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.sorted = lambda x: [1, 2, 3]\ndef f(x):\n    return 0\n"
    )
    result = score(cheat, {"assert": "assert abs(f(1) - 7) < 1e-9\nassert sorted(f(2)) == [1, 2, 3]\n"})
    assert result.score == 0.0


def test_printing_fake_result_records_on_stdout_changes_nothing():
    cheat = 'print(\'{"value": 3}\')\nprint(\'{"values": [{"value": 2}]}\')\ndef add(a, b):\n    return None\n'
    assert score(cheat, ADD).score == 0.0


def test_writing_a_forged_record_on_the_result_channel_fails_the_test():
    cheat = "import os, atexit\ndef add(a, b):\n    os.write(3, b'{\"value\": %d}\\n' % (a + b))\n    return None\n"
    result = score(cheat, ADD)
    assert result.score == 0.0
    assert "result records" in result.details["tests"][0]["message"]


def test_exiting_before_the_tests_run_fails_them():
    for exit_call in ("import sys\nsys.exit(0)\n", "import os\nos._exit(0)\n"):
        result = score(exit_call + "def add(a, b):\n    return a + b\n", ADD)
        assert result.score == 0.0, exit_call


def test_exit_status_zero_alone_never_passes_a_stdio_test():
    assert score("import sys\nsys.exit(0)\n", DOUBLE).score == 0.0


# --- what cannot be judged is an error, not a zero ---------------------------------------------


def test_malformed_reference_is_a_verifier_error():
    with pytest.raises(VerifierError, match="reference tests"):
        score("print(1)\n", {"inputs": ["1"]})


def test_call_tests_need_python():
    with pytest.raises(VerifierError, match="need Python"):
        score("int main(){}\n", ADD, lang="c", language="c")


def test_no_sandbox_on_the_machine_is_an_error_status_marked_sandbox_error(monkeypatch):
    def unavailable():
        raise SandboxUnavailable("code execution is disabled: bubblewrap is not installed")

    monkeypatch.setattr(code_module, "default_pool", unavailable)
    result = score("print(1)\n", DOUBLE)
    assert (result.status, result.details["verdict"]) == ("error", "sandbox_error")
    assert "bubblewrap" in result.error


class _BrokenSandboxPool:
    """A pool whose sandbox fails mid-job, the way a crashed server looks to the verifier."""

    @contextmanager
    def job(self, lang, code):
        yield self

    details = {"backend": "test", "memory_limit": "cgroup"}
    language = find_language("python")

    def setup(self, files=None):
        return None

    def run(self, stdin=b"", limits=None, test=None, last=False):
        return RunResult("sandbox_error", None, "", "", 0.0, details={"message": "the sandbox stopped answering"})

    run_tests = SandboxPool.run_tests  # the pool's own way through a submission's job, on this sandbox


def test_a_sandbox_failure_during_the_tests_masks_the_sample(monkeypatch):
    monkeypatch.setattr(code_module, "default_pool", _BrokenSandboxPool)
    result = score("print(1)\n", DOUBLE, failure_score=-1.0)
    assert (result.status, result.score, result.details["verdict"]) == ("error", -1.0, "sandbox_error")
    assert verdicts(result) == ["sandbox_error"] * 3


def test_details_say_how_memory_was_limited():
    result = score("print(int(input()) * 2)\n", DOUBLE)
    assert result.details["sandbox"]["memory_limit"] in ("cgroup", "rlimit", "container")
