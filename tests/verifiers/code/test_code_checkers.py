"""Special judges: ``checker <input> <output> <answer>``, exit 0 accepted, 1 wrong, 2 presentation;
anything else is no judgement, a per-sample ``error`` and never a 0.

The checkers are written here, in Python and C++; the C++ ones include a small ``testlib.h`` written
here too (a few of testlib's names), handed over in ``files`` or through ``checker_include_dir``.
"""

from __future__ import annotations

import re
import textwrap

import pytest

import rewardhub.verifiers.code.verifier as code_module
from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.code import CodeVerifier

VERIFIER = CodeVerifier()


def score(program: str, reference, lang: str = "python", **config):
    response = f"```{lang}\n{textwrap.dedent(program)}```\n"
    return VERIFIER.score(Sample(response=response, reference=reference), CodeVerifier.Config(**config))


def verdicts(result) -> list[str]:
    return [test["verdict"] for test in result.details["tests"]]


# Any two positive numbers that sum to n are a right answer: one expected output cannot judge it.
PAIR_TESTS = {"inputs": ["5\n", "2\n"], "outputs": ["1 4\n", "1 1\n"]}
PYTHON_CHECKER = textwrap.dedent("""
    import sys
    n = int(open(sys.argv[1]).read())
    words = open(sys.argv[2]).read().split()
    if len(words) != 2 or not all(w.lstrip("-").isdigit() for w in words):
        sys.exit(2)  # presentation: not two integers
    a, b = map(int, words)
    sys.exit(0 if a > 0 and b > 0 and a + b == n else 1)
""")
TESTLIB_H = textwrap.dedent("""
    // A few of testlib's names, written for these tests (the real testlib.h is used the same way).
    #pragma once
    #include <cstdio>
    #include <cstdlib>
    enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3 };
    struct InStream {
        FILE *f = nullptr;
        long long readLong() { long long x; if (std::fscanf(f, "%lld", &x) != 1) std::exit(_pe); return x; }
        bool seekEof() { int c; while ((c = std::fgetc(f)) == ' ' || c == '\\n' || c == '\\r') {} return c == EOF; }
    };
    inline InStream inf, ouf, ans;
    inline void registerTestlibCmd(int argc, char *argv[]) {
        if (argc < 4) std::exit(_fail);
        inf.f = std::fopen(argv[1], "r"); ouf.f = std::fopen(argv[2], "r"); ans.f = std::fopen(argv[3], "r");
        if (!inf.f || !ouf.f || !ans.f) std::exit(_fail);
    }
    [[noreturn]] inline void quitf(TResult result, const char *message) { std::fputs(message, stderr); std::exit(result); }
""")
CPP_CHECKER = textwrap.dedent("""
    #include <testlib.h>
    int main(int argc, char *argv[]) {
        registerTestlibCmd(argc, argv);
        long long n = inf.readLong(), a = ouf.readLong(), b = ouf.readLong();
        if (!ouf.seekEof()) quitf(_pe, "extra output");
        if (a > 0 && b > 0 && a + b == n) quitf(_ok, "ok");
        quitf(_wa, "wrong sum");
    }
""")


def with_checker(language: str, code: str, files: dict | None = None) -> dict:
    return {**PAIR_TESTS, "checker": {"language": language, "code": code, **({"files": files} if files else {})}}


SOLUTIONS = {
    "another right answer": ("n = int(input())\nprint(n - 1, 1)\n", "ok", 1.0, ["passed", "passed"]),
    "a wrong answer": ("n = int(input())\nprint(n, 0)\n", "ok", 0.0, ["wrong_answer", "wrong_answer"]),
    "a presentation error": ("n = int(input())\nprint(n - 1, 1, 'done')\n", "ok", 0.0, ["presentation_error"] * 2),
    "a crashing program": ("raise SystemExit(3)\n", "ok", 0.0, ["runtime_error", "runtime_error"]),
}


@pytest.mark.parametrize("solution", sorted(SOLUTIONS))
@pytest.mark.parametrize("checker", ["python", "cpp"])
def test_the_checker_decides(checker, solution):
    program, status, expected_score, expected_verdicts = SOLUTIONS[solution]
    reference = with_checker("python", PYTHON_CHECKER) if checker == "python" else with_checker("cpp", CPP_CHECKER, {"testlib.h": TESTLIB_H})  # fmt: skip
    result = score(program, reference)
    assert (result.status, result.score, verdicts(result)) == (status, expected_score, expected_verdicts)


def test_without_the_checker_the_same_right_answer_would_be_wrong():
    result = score("n = int(input())\nprint(n - 1, 1)\n", PAIR_TESTS)
    assert verdicts(result) == ["wrong_answer", "passed"]  # "4 1" is not the "1 4" on file


def test_all_or_nothing_stops_judging_at_the_first_rejected_output():
    result = score("n = int(input())\nprint(n, 0)\n", with_checker("python", PYTHON_CHECKER), scoring="all_or_nothing")
    assert verdicts(result) == ["wrong_answer", "skipped"]


def test_testlib_from_the_include_dir_setting(tmp_path, monkeypatch):
    (tmp_path / "testlib.h").write_text(TESTLIB_H)
    pool = code_module.default_pool()
    monkeypatch.setattr(pool, "settings", pool.settings.model_copy(update={"checker_include_dir": str(tmp_path)}))
    assert score("n = int(input())\nprint(1, n - 1)\n", with_checker("cpp", CPP_CHECKER)).score == 1.0


def test_a_cpp_checker_without_its_header_is_no_judgement():
    result = score("print(1, 4)\n", with_checker("cpp", CPP_CHECKER))
    assert (result.status, result.details["verdict"]) == ("error", "checker_error")
    assert "does not build" in result.error and "testlib.h" in result.error


NO_JUDGEMENT = {
    "testlib's fail (exit 3)": ("cpp", "#include <cstdlib>\nint main() { std::exit(3); }\n", "status 3"),
    "another exit status": ("python", "raise SystemExit(7)\n", "status 7"),
    "a Python exception": ("python", "import sys\nint(open(sys.argv[2]).read().split()[5])\n", "crashed: IndexError"),
    "a segfault": ("cpp", "int main() { volatile int *p = nullptr; return *p; }\n", "SIGSEGV"),
    "a checker that never ends": ("python", "while True:\n    pass\n", "ran out of time"),
    "a checker that sleeps forever": (
        "cpp",
        "#include <unistd.h>\nint main() { for (;;) pause(); }\n",
        "ran out of time",
    ),
    "a checker that eats memory": (
        "python",
        "x = bytearray(8 << 30)\n",
        "memory|MemoryError",
    ),
}


@pytest.mark.parametrize("case", sorted(NO_JUDGEMENT))
def test_a_checker_that_gives_no_judgement_is_an_error_never_a_zero(case):
    language, checker, message = NO_JUDGEMENT[case]
    patience = 10.0 if "memory" in case else 1.0  # time enough to reach the memory limit on a busy machine
    result = score("n = int(input())\nprint(1, n - 1)\n", with_checker(language, checker), checker_timeout_s=patience)
    assert (result.status, result.details["verdict"]) == ("error", "checker_error")
    assert re.search(message, result.error)


def test_a_checker_for_function_call_tests_is_refused():
    reference = {"fn_name": "f", "inputs": [[1]], "outputs": [1], "checker": {"language": "python", "code": "pass"}}
    with pytest.raises(VerifierError, match="stdin/stdout tests only"):
        score("def f(x):\n    return x\n", reference)


def test_a_checker_in_a_language_we_do_not_run_is_a_verifier_error():
    with pytest.raises(VerifierError, match="checker's language"):
        score("print(1, 4)\n", with_checker("cobol", "DISPLAY 'HI'."))


def test_float_tolerance_stays_a_setting_of_the_default_comparator():
    reference = {"inputs": ["\n"], "outputs": ["0.333333\n"]}
    program = "print(1 / 3)\n"
    assert score(program, reference).score == 1.0
    assert score(program, reference, float_tolerance=0.0).score == 0.0
