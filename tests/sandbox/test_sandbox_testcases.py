"""The reference formats of APPS, TACO, LiveCodeBench, HumanEval and MBPP."""

from __future__ import annotations

import json

import pytest

from rewardhub.sandbox.asserts import AssertPlan
from rewardhub.sandbox.testcases import CallTest, StdioTest, parse_tests


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
