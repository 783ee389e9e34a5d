"""The `code` verifier on rows shaped like each data set's, and the cheats a whole-run test must not pass.

Each row is written here in its data set's shape (field names, how tests are stored, how the
entry point is given); a right solution must score 1 and a wrong one less.
"""

from __future__ import annotations

import base64
import json
import pickle
import textwrap
import zlib

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.code import CodeVerifier

VERIFIER = CodeVerifier()


def score(program: str, reference, lang: str = "python", **config):
    response = f"My solution:\n```{lang}\n{textwrap.dedent(program)}```\n"
    return VERIFIER.score(Sample(response=response, reference=reference), CodeVerifier.Config(**config))


def verdicts(result) -> list[str]:
    return [test["verdict"] for test in result.details["tests"]]


# --- HumanEval and EvalPlus -------------------------------------------------------------------------

HUMANEVAL_ROW = {
    "task_id": "HumanEval/1001",
    "prompt": 'def has_close(numbers: list, threshold: float) -> bool:\n    """Any two numbers closer than threshold?"""\n',
    "entry_point": "has_close",
    "test": textwrap.dedent("""

        METADATA = {
            'author': 'rh',
            'dataset': 'test'
        }


        def check(candidate):
            assert candidate([1.0, 2.0, 3.9, 4.0], 0.3) == True
            assert candidate([1.0, 2.0, 3.0], 0.5) == False
            assert candidate([], 1.0) == False
    """),
}
HAS_CLOSE = """
    def has_close(numbers, threshold):
        return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
"""


def test_humaneval_row_as_the_data_set_gives_it():
    assert score(HAS_CLOSE, HUMANEVAL_ROW).score == 1.0
    wrong = score("def has_close(numbers, threshold):\n    return True\n", HUMANEVAL_ROW)
    assert (wrong.score, verdicts(wrong)) == (pytest.approx(1 / 3), ["passed", "wrong_answer", "wrong_answer"])


def test_humaneval_test_text_followed_by_check_of_the_entry_point_as_its_harness_runs_it():
    """Once refused with "the tests contain no assert statements"."""
    reference = {"assert": HUMANEVAL_ROW["test"] + "\ncheck(has_close)\n"}
    assert score(HAS_CLOSE, reference).score == 1.0


LOOPING_ROW = {
    "task_id": "HumanEval/1038",
    "prompt": "def encode_cyclic(s: str):\n    ...\n\ndef decode_cyclic(s: str):\n",
    "entry_point": "decode_cyclic",
    "test": textwrap.dedent("""

        METADATA = {}


        def check(candidate):
            from random import randint, choice
            import string

            letters = string.ascii_lowercase
            for _ in range(50):
                str = ''.join(choice(letters) for i in range(randint(10, 20)))
                encoded_str = encode_cyclic(str)
                assert candidate(encoded_str) == str

    """),
}
ENCODE = """
    def encode_cyclic(s):
        groups = [s[3 * i:min(3 * i + 3, len(s))] for i in range((len(s) + 2) // 3)]
        return "".join(g[1:] + g[0] if len(g) == 3 else g for g in groups)
"""
CYCLIC = (
    ENCODE
    + """
    def decode_cyclic(s):
        return encode_cyclic(encode_cyclic(s))
"""
)


def test_asserts_in_a_for_loop_run_as_one_test_and_call_the_programs_own_helpers():
    """Once refused the same way; the loop calls ``encode_cyclic`` from the prompt, in the program."""
    result = score(CYCLIC, LOOPING_ROW)
    assert (result.score, verdicts(result)) == (1.0, ["passed"])
    assert "for loop" in result.details["tests"][0]["why_whole"]
    wrong = score(CYCLIC.replace("encode_cyclic(encode_cyclic(s))", "s"), LOOPING_ROW)
    assert (wrong.score, verdicts(wrong)) == (0.0, ["wrong_answer"])
    assert "AssertionError" in wrong.details["tests"][0]["message"]


EVALPLUS_ROW = {
    "task_id": "HumanEval/1002",
    "entry_point": "mean",
    "test": textwrap.dedent("""
        import numpy as np

        def is_floats(x) -> bool:
            if isinstance(x, float):
                return True
            if isinstance(x, (list, tuple)):
                return all(isinstance(i, float) for i in x)
            return False

        def assertion(out, exp, atol):
            exact_match = out == exp
            if atol == 0 and is_floats(exp):
                atol = 1e-6
            if not exact_match and atol != 0:
                assert np.allclose(out, exp, rtol=1e-07, atol=atol)
            else:
                assert exact_match

        def check(candidate):
            inputs = [[[1.0, 2.0, 3.0]], [[0.1, 0.2]], [[5.0]]]
            results = [2.0, 0.15000000000000002, 5.0]
            for i, (inp, exp) in enumerate(zip(inputs, results)):
                assertion(candidate(*inp), exp, 0)
    """),
}


def test_evalplus_assertion_helper_with_numpy_tolerance():
    pytest.importorskip("numpy")
    assert score("def mean(xs):\n    return sum(xs) / len(xs)\n", EVALPLUS_ROW).score == 1.0
    assert score("def mean(xs):\n    return max(xs)\n", EVALPLUS_ROW).score == 0.0


def test_asserts_in_a_with_block_and_a_helper_at_module_level():
    reference = {
        "assert": textwrap.dedent("""
            import contextlib

            def same(a, b):
                assert a == b, (a, b)

            with contextlib.nullcontext():
                same(double(2), 4)
                same(double(-1), -2)
        """)
    }
    assert score("def double(x):\n    return 2 * x\n", reference).score == 1.0
    assert score("def double(x):\n    return x + 2\n", reference).score == 0.0


def test_a_test_that_expects_the_program_to_raise_gets_the_same_builtin_exception():
    reference = {
        "assert": "for bad in ([], None):\n    try:\n        first(bad)\n    except (IndexError, TypeError):\n        pass\n"
        "    else:\n        assert False, 'no exception'\n"
    }
    assert score("def first(xs):\n    return xs[0]\n", reference).score == 1.0
    assert score("def first(xs):\n    return 0\n", reference).score == 0.0


# --- what a whole-run test must never pass ---------------------------------------------------------

CHEATS = {
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n",
    "os._exit(0) at import": "import os\nos._exit(0)\n",
    "os._exit(0) when called": "import os\ndef decode_cyclic(s):\n    os._exit(0)\n",
    "sys.exit(0) when called": "import sys\ndef decode_cyclic(s):\n    sys.exit(0)\n",
    "replacing check": "def check(candidate):\n    pass\ndef decode_cyclic(s):\n    return ''\n",
    "replacing check in builtins": "import builtins\nbuiltins.check = lambda c: None\ndef decode_cyclic(s):\n    return ''\n",
    "replacing AssertionError": "import builtins\nbuiltins.AssertionError = type('E', (Exception,), {})\n"
    "def decode_cyclic(s):\n    return ''\n",
    "a trace function that skips the asserts": textwrap.dedent("""
        import sys
        def tracer(frame, event, arg):
            if frame.f_code.co_name == "check" and event == "line":
                try:
                    frame.f_lineno = frame.f_code.co_firstlineno + 99
                except ValueError:
                    pass
            return tracer
        sys.settrace(tracer)
        def decode_cyclic(s):
            return ''
    """),
    "replacing check's code from a trace function": textwrap.dedent("""
        import sys
        def tracer(frame, event, arg):
            check = frame.f_globals.get("check")
            if callable(check) and getattr(check, "__code__", None) is not None and check.__code__.co_name == "check":
                check.__code__ = (lambda candidate: None).__code__
            return tracer
        sys.settrace(tracer)
        def decode_cyclic(s):
            return ''
    """),
    "swallowing the failed assert and exiting 0": textwrap.dedent("""
        import atexit, os, sys
        sys.excepthook = lambda *args: None
        atexit.register(os._exit, 0)
        def decode_cyclic(s):
            return ''
    """),
    "an object equal to everything": "class Eq(str):\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = str.__hash__\ndef decode_cyclic(s):\n    return Eq()\n",
    "a forged record on the result channel": 'import os\nos.write(3, b\'{"check": "passed"}\\n\')\nos._exit(0)\n',
    "a forged record through the test process's fd": textwrap.dedent("""
        import os
        def decode_cyclic(s):
            with open(f"/proc/{os.getppid()}/fd/3", "w") as channel:
                channel.write('{"check": "passed"}\\n')
            os._exit(0)
    """),
    "reading the test process's memory": textwrap.dedent("""
        import os
        def decode_cyclic(s):
            open(f"/proc/{os.getppid()}/mem", "rb").close()
            os._exit(0)
    """),
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheats_fail_a_whole_run_test(cheat):
    """Each cheat comes with the prompt's real ``encode_cyclic`` and a wrong ``decode_cyclic``: only the
    cheat could make it pass, and the failure names what happened, never a missing name."""
    result = score(textwrap.dedent(ENCODE) + textwrap.dedent(CHEATS[cheat]), LOOPING_ROW)
    assert (result.status, result.score) == ("ok", 0.0), result.details["tests"]
    (test,) = result.details["tests"]
    assert test["verdict"] != "passed"
    assert "NameError" not in test.get("message", "")


# --- MBPP, APPS/TACO, CodeContests, LiveCodeBench, verl -------------------------------------------


def test_mbpp_row_with_setup_code_and_imports():
    row = {
        "task_id": 1001,
        "text": "Write a function to find the area of a circle of radius r, rounded to LIMIT digits.",
        "code": "import math\ndef circle_area(r):\n    return round(math.pi * r * r, LIMIT)",
        "test_list": [
            "assert circle_area(1) == 3.14",
            "assert circle_area(2) == 12.57",
            "assert math.isclose(circle_area(0), 0)",
        ],  # fmt: skip
        "test_setup_code": "LIMIT = 2",
        "test_imports": ["import math"],
        "challenge_test_list": [],
    }
    right = "import math\nLIMIT = 2\ndef circle_area(r):\n    return round(math.pi * r * r, LIMIT)\n"
    assert score(right, row).score == 1.0
    assert verdicts(score("def circle_area(r):\n    return 3.14 * r\n", row)) == ["passed", "wrong_answer", "passed"]


def test_apps_taco_row_with_input_output_as_a_json_string():
    row = {
        "problem_id": 4001,
        "question": "Read n and print n squared.",
        "input_output": json.dumps({"inputs": ["3\n", "12\n"], "outputs": ["9\n", "144\n"]}),
        "difficulty": "introductory",
    }
    assert score("print(int(input()) ** 2)\n", row).score == 1.0
    taco_fn = {"input_output": json.dumps({"fn_name": "square", "inputs": [[3], [12]], "outputs": [[9], [144]]})}
    assert score("def square(n):\n    return n * n\n", taco_fn).score == 1.0


def test_codecontests_row_with_public_private_and_generated_tests():
    row = {
        "name": "1001_A. Sum of two",
        "description": "Print a + b.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["10 -3\n"], "output": ["7\n"]},
        "generated_tests": {"input": ["0 0\n", "2000000000 2000000000\n"], "output": ["0\n", "4000000000\n"]},
        "difficulty": 7,
    }
    cpp = '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a+b);}\n'
    assert score(cpp, row, lang="cpp", language="cpp").score == 1.0
    overflow = cpp.replace("long long", "int").replace("%lld", "%d")
    assert verdicts(score(overflow, row, lang="cpp", language="cpp")) == ["passed", "passed", "passed", "wrong_answer"]


def lcb_private(cases) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def test_livecodebench_stdin_row():
    row = {
        "question_title": "Reverse",
        "platform": "atcoder",
        "public_test_cases": json.dumps([{"input": "abc\n", "output": "cba\n", "testtype": "stdin"}]),
        "private_test_cases": lcb_private([{"input": "xy\n", "output": "yx\n", "testtype": "stdin"}]),
        "metadata": "{}",
    }
    assert score("print(input()[::-1])\n", row).score == 1.0
    assert verdicts(score("print(input())\n", row)) == ["wrong_answer", "wrong_answer"]


def test_livecodebench_functional_row_is_called_leetcode_style():
    row = {
        "question_title": "Max pair",
        "platform": "leetcode",
        "starter_code": "class Solution:\n    def maxPair(self, nums: List[int], k: int) -> int:\n        ",
        "public_test_cases": json.dumps([{"input": "[1, 5, 3]\n2", "output": "8", "testtype": "functional"}]),
        "private_test_cases": lcb_private([{"input": "[4]\n1", "output": "4", "testtype": "functional"}]),
        "metadata": json.dumps({"func_name": "maxPair"}),
    }
    solution = "class Solution:\n    def maxPair(self, nums, k):\n        return sum(sorted(nums)[-k:])\n"
    assert score(solution, row).score == 1.0


def test_livecodebench_private_tests_with_a_forbidden_global_are_a_per_sample_error():
    row = {
        "public_test_cases": "[]",
        "private_test_cases": base64.b64encode(zlib.compress(b"cos\nsystem\n(S'id'\ntR.")).decode(),
    }
    with pytest.raises(VerifierError, match="os.system"):
        score("print(1)\n", row)


def test_verl_test_cases_with_fn_name_and_assert_cases():
    row = {
        "data_source": "code",
        "reward_model": {"style": "rule"},
        "test_cases": {"fn_name": "add", "inputs": ["1\n2", "[1]\n[2]"], "outputs": ["3", "[1, 2]"],
                       "assert_case": ["assert add(2, 2) == 4", "for i in range(3):\n    assert add(i, i) == 2 * i"]},
    }  # fmt: skip
    result = score("def add(a, b):\n    return a + b\n", row["test_cases"])
    assert (result.score, verdicts(result)) == (1.0, ["passed"] * 4)
    as_json = score("def add(a, b):\n    return a + b\n", {"test_cases": json.dumps(row["test_cases"])})
    assert as_json.score == 1.0


@pytest.mark.parametrize(
    "reference",
    [{"input_output": "{broken"}, {"test_cases": "[not json"}, {"public_tests": {"input": "1"}},
     {"test": "def check(candidate):\n    pass\n", "entry_point": "f"}],
)  # fmt: skip
def test_malformed_rows_are_verifier_errors_with_the_reason(reference):
    with pytest.raises(VerifierError, match="cannot read the reference tests"):
        score("print(1)\n", reference)


def test_a_module_the_program_writes_into_its_folder_is_not_what_the_test_imports():
    """The test process imports from the system only: a ``colorsys.py`` left by the program would
    otherwise run inside it, where the result channel is."""
    reference = {
        "assert": "import colorsys\nfor n in (1, 2):\n    assert colorsys.rgb_to_hsv(0, 0, 0)[2] == 0 and double(n) == 2 * n\n"
    }
    cheat = textwrap.dedent("""
        with open("colorsys.py", "w") as fake:
            fake.write("import os\\nos.write(3, b'{\\"check\\": \\"passed\\"}\\\\n')\\nos._exit(0)\\n")
        def double(n):
            return n
    """)
    result = score(cheat, reference)
    assert (result.score, verdicts(result)) == (0.0, ["wrong_answer"])
    assert result.details["tests"][0]["message"].startswith("AssertionError")
    assert score("def double(n):\n    return 2 * n\n", reference).score == 1.0
