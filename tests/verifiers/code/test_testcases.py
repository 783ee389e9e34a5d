"""The reference formats of HumanEval, EvalPlus, MBPP, APPS/TACO, CodeContests, LiveCodeBench and verl."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from rewardhub.verifiers.code import lcb
from rewardhub.verifiers.code.asserts import AssertPlan, WholeCheck
from rewardhub.verifiers.code.testcases import CallTest, CheckerSpec, StdioTest, parse_reference, parse_tests


def test_stdin_stdout_tests():
    assert parse_tests({"inputs": ["1\n", ["2", "3"]], "outputs": ["a\n", ["b", "c"]]}) == [
        StdioTest("1\n", "a\n"),
        StdioTest("2\n3", "b\nc"),
    ]


def test_function_call_tests():
    assert parse_tests({"fn_name": "f", "inputs": [[1, 2], 3], "outputs": [3, [4]]}) == [
        CallTest("f", [1, 2], 3),
        CallTest("f", [3], [4]),
    ]


def test_apps_input_output_json_string():
    raw = {"input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]})}
    assert parse_tests(raw) == [StdioTest("1\n", "1\n")]


def test_livecodebench_list_of_cases():
    assert parse_tests([{"input": "1\n", "output": "2\n", "testtype": "stdin"}]) == [StdioTest("1\n", "2\n")]


def test_asserts():
    (plan,) = parse_tests({"assert": "assert f(1) == 2"})
    assert isinstance(plan, AssertPlan)
    assert (plan.source, plan.setup, plan.leaves) == ("assert f(1) == 2", "", ("f(1)",))
    assert plan.holds([2]) and not plan.holds([3])  # the comparison is ours, on the leaf's value


def test_mbpp_test_list_with_setup_code():
    plans = parse_tests({"assert": ["assert f(1) == 2", "assert f(2) == 4"], "setup": "import math"})
    assert [(p.setup, p.leaves) for p in plans] == [("import math", ("f(1)",)), ("import math", ("f(2)",))]


@pytest.mark.parametrize(
    "reference",
    [None, "not json", 42, {"inputs": ["1"]}, {"inputs": ["1"], "outputs": []}, {"inputs": [], "outputs": []},
     {"assert": 3}, {"assert": "assert ("}, [{"input": "1"}], {"inputs": [1], "outputs": [2]}],
)  # fmt: skip
def test_malformed_references_say_what_is_wrong(reference):
    with pytest.raises(ValueError):
        parse_tests(reference)


# --- rows shaped like each data set's (written here) ----------------------------------------------

HUMANEVAL_ROW = {
    "task_id": "HumanEval/1000",
    "prompt": 'def add_one(x: int) -> int:\n    """Add one."""\n',
    "entry_point": "add_one",
    "canonical_solution": "    return x + 1\n",
    "test": "\n\nMETADATA = {'author': 'rh', 'dataset': 'test'}\n\n\ndef check(candidate):\n"
    "    assert candidate(1) == 2\n    assert candidate(-1) == 0\n",
}


def test_humaneval_row_with_its_entry_point_field():
    plans = parse_tests(HUMANEVAL_ROW)
    assert [p.leaves for p in plans] == [("candidate(1)",), ("candidate(-1)",)]


def test_humaneval_test_text_followed_by_its_check_call_names_the_entry_point_itself():
    plans = parse_tests({"assert": HUMANEVAL_ROW["test"] + "\ncheck(add_one)\n"})
    assert [p.setup.splitlines()[-1] for p in plans] == ["candidate = add_one"] * 2


def test_asserts_in_a_loop_make_one_whole_test_that_asks_the_program_for_its_functions():
    row = {
        "test": "def check(candidate):\n    import random\n    for _ in range(10):\n"
        "        s = ''.join(random.choice('abc') for _ in range(5))\n"
        "        assert candidate(encode_cyclic(s)) == s\n",
        "entry_point": "decode_cyclic",
    }
    (test,) = parse_tests(row)
    assert isinstance(test, WholeCheck)
    assert "a for loop" in test.why
    assert test.source.rstrip().endswith("check(decode_cyclic)")
    assert set(test.names) == {"encode_cyclic", "decode_cyclic"}


def test_evalplus_assertion_helper_makes_one_whole_test():
    test_text = (
        "import math\n\ndef assertion(out, exp, atol):\n    if atol:\n        assert math.isclose(out, exp, abs_tol=atol)\n"
        "    else:\n        assert out == exp\n\n\ndef check(candidate):\n    inputs = [[1], [2]]\n    results = [2, 3]\n"
        "    for inp, exp in zip(inputs, results):\n        assertion(candidate(*inp), exp, 0)\n"
    )
    (test,) = parse_tests({"test": test_text, "entry_point": "add_one"})
    assert isinstance(test, WholeCheck)
    assert test.names == ("add_one",)


def test_asserts_in_a_with_block_make_one_whole_test():
    (test,) = parse_tests({"assert": "import contextlib\nwith contextlib.suppress(KeyError):\n    assert f(1) == 2\n"})
    assert isinstance(test, WholeCheck) and "with block" in test.why


def test_mbpp_row():
    row = {
        "task_id": 2,
        "text": "Write a function to find the shared elements from the given two lists.",
        "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))",
        "test_list": [
            "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
            "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
        ],
        "test_setup_code": "LIMIT = 10",
        "test_imports": ["import math"],
        "challenge_test_list": [],
    }
    plans = parse_tests(row)
    assert [p.setup for p in plans] == ["import math\nLIMIT = 10"] * 2
    assert [p.leaves for p in plans] == [("similar_elements((3, 4, 5, 6), (5, 7, 4, 10))",), ("similar_elements((1, 2, 3, 4), (5, 4, 3, 7))",)]  # fmt: skip


def test_apps_taco_row_with_a_function_name():
    row = {"problem_id": 7, "input_output": json.dumps({"fn_name": "solve", "inputs": [[1, 2]], "outputs": [[3]]})}
    assert parse_tests(row) == [CallTest("solve", [1, 2], [3])]


def test_codecontests_row_reads_all_three_splits():
    row = {
        "name": "1000_A. Sum",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["2 2\n"], "output": ["4\n"]},
        "generated_tests": {"input": ["0 0\n", "5 5\n"], "output": ["0\n", "10\n"]},
    }
    assert [t.stdin for t in parse_tests(row)] == ["1 2\n", "2 2\n", "0 0\n", "5 5\n"]


def lcb_private(cases) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def test_livecodebench_stdin_row_with_public_and_private_cases():
    row = {
        "question_title": "Sum",
        "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
        "private_test_cases": lcb_private([{"input": "4 5\n", "output": "9\n", "testtype": "stdin"}]),
        "metadata": "{}",
    }
    assert parse_tests(row) == [StdioTest("1 2\n", "3\n"), StdioTest("4 5\n", "9\n")]


def test_livecodebench_functional_row_calls_the_function_with_one_json_argument_per_line():
    row = {
        "public_test_cases": json.dumps([{"input": "[1, 2, 3]\n2", "output": "6", "testtype": "functional"}]),
        "private_test_cases": lcb_private([{"input": '"ab"\n3', "output": '"ababab"', "testtype": "functional"}]),
        "metadata": json.dumps({"func_name": "repeatSum"}),
    }
    assert parse_tests(row) == [CallTest("repeatSum", [[1, 2, 3], 2], 6), CallTest("repeatSum", ["ab", 3], "ababab")]


def test_verl_test_cases_with_inputs_outputs_and_assert_cases():
    row = {"test_cases": {"fn_name": "f", "inputs": ["1\n2"], "outputs": ["3"], "assert_case": ["assert f(2, 2) == 4"]}}
    call, plan = parse_tests(row)
    assert call == CallTest("f", [1, 2], 3)
    assert isinstance(plan, AssertPlan) and plan.leaves == ("f(2, 2)",)


def test_a_checker_beside_stdin_tests():
    reference = parse_reference(
        {"inputs": ["1\n"], "outputs": ["1\n"], "checker": {"language": "cpp", "code": "int main(){}"}}
    )
    assert reference.checker == CheckerSpec("cpp", "int main(){}")


FORBIDDEN_PICKLE = base64.b64encode(zlib.compress(b"cos\nsystem\n(S'echo pwned'\ntR.")).decode()


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ({"input_output": "{not json"}, "not JSON"),
        ({"public_test_cases": "[]", "private_test_cases": FORBIDDEN_PICKLE}, "os.system"),
        ({"private_test_cases": "%%% not base64"}, "not base64"),
        ({"public_test_cases": json.dumps([{"input": "1", "output": "1", "testtype": "functional"}])}, "func_name"),
        ({"public_tests": {"input": ["1"], "output": []}}, "not as many outputs"),
        ({"test": "def check(candidate):\n    assert candidate(1)\n"}, "name no function"),
        ({"test_list": "assert f(1) == 1"}, "list of strings"),
        ({"inputs": ["1"], "outputs": ["1"], "checker": {"language": "cpp"}}, "needs a 'language' and its 'code'"),
        (
            {"fn_name": "f", "inputs": [[1]], "outputs": [1], "checker": {"language": "python", "code": "x"}},
            "stdin/stdout tests only",
        ),  # fmt: skip
    ],
)
def test_malformed_rows_say_what_is_wrong(reference, message):
    with pytest.raises(ValueError, match=message):
        parse_tests(reference)


def test_a_zlib_bomb_in_private_tests_stops_at_the_cap(monkeypatch):
    monkeypatch.setattr(lcb, "MAX_DECOMPRESSED", 1 << 20)
    bomb = base64.b64encode(zlib.compress(b"\0" * (4 << 20))).decode()
    with pytest.raises(ValueError, match="once decompressed"):
        parse_tests({"public_test_cases": "[]", "private_test_cases": bomb})
