"""Code problems read from rows as HumanEval, MBPP and our own format ship them."""

from __future__ import annotations

import pytest

from rewardhub.audit.code_tasks import code_task
from rewardhub.errors import InvalidRequest


def test_a_humaneval_row_is_its_prompt_and_canonical_solution_against_its_check() -> None:
    row = {
        "task_id": "HumanEval/0",
        "prompt": "def inc(x):\n    '''Add one.'''\n",
        "canonical_solution": "    return x + 1\n",
        "test": "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-3) == -2\n",
        "entry_point": "inc",
    }
    task = code_task(row, "line 1")
    assert task.id == "HumanEval/0"
    assert task.solution == row["prompt"] + row["canonical_solution"]
    assert task.tests == {"test": row["test"], "entry_point": "inc"}
    assert task.entry_point == "inc" and task.calls == [[1], [-3]]


def test_an_mbpp_row_finds_the_function_the_code_defines_and_the_tests_call() -> None:
    row = {
        "task_id": 2,
        "code": "import math\ndef helper(a):\n    return a\ndef area(r):\n    return math.pi * r * r\n",
        "test_list": ["assert round(area(1), 2) == 3.14", "assert round(area(2), 2) == 12.57"],
        "test_setup_code": "",
        "test_imports": ["import math"],
    }
    task = code_task(row, "line 2")
    assert (task.id, task.entry_point, task.setup) == ("2", "area", "import math")
    assert task.tests == {"test_list": row["test_list"], "test_imports": ["import math"]}
    assert task.calls == [[1], [2]]


def test_our_own_row_takes_any_reference_the_code_verifier_reads() -> None:
    calls = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]}
    task = code_task({"id": "a", "solution": "def add(a, b):\n    return a + b\n", "tests": calls}, "line 3")
    assert (task.entry_point, task.calls) == ("add", [[1, 2], [3, 4]])
    stdio = {"inputs": ["1\n"], "outputs": ["2\n"]}
    task = code_task({"id": "b", "solution": "print(int(input()) + 1)\n", "tests": stdio}, "line 4")
    assert (task.entry_point, task.calls) == (None, [])


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"prompt": "x"}, "not a code problem"),
        ({"solution": "def f(): pass", "tests": {"assert": "assert f() is None"}}, "needs an id"),
        ({"id": 1, "solution": "  ", "tests": {"assert": "assert True"}}, "empty"),
        ({"id": 1, "solution": "def f(): pass", "tests": "{not json"}, "not JSON"),
    ],
)
def test_a_row_that_is_no_problem_names_itself(row: dict, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says) as raised:
        code_task(row, "data.jsonl:7")
    assert "data.jsonl:7" in raised.value.message
