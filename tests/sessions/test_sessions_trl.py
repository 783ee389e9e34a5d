"""TRL: the session environment as ``GRPOTrainer(environment_factory=...)`` uses it (TRL's own tool
discovery and transformers' schema reader), and the stateless tool function, against a served app."""

from __future__ import annotations

import inspect

import pytest
from session_support import served

from rewardhub.integrations.sessions import BashSandboxEnvironment, PythonSandboxEnvironment, python_tool


@pytest.fixture(scope="module")
def url(manager):
    with served(manager) as address:
        yield address


def _trl_tools(environment: object) -> dict:
    """The tools TRL 1.x exposes of an environment: its public functions but reset and get_reward."""
    return {
        name: getattr(environment, name)
        for name, _ in inspect.getmembers(type(environment), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def test_one_rollout_keeps_its_state_and_its_tests_give_the_reward(url):
    from transformers.utils import get_json_schema

    environment = PythonSandboxEnvironment(url=url)
    tools = _trl_tools(environment)
    assert list(tools) == ["python"]
    schema = get_json_schema(tools["python"])  # what TRL renders into the chat template
    assert schema["function"]["name"] == "python" and "code" in schema["function"]["parameters"]["properties"]

    example = {
        "prompt": "write add",
        "files": {"task.md": "add(a, b)"},
        "test_command": "python3 -c 'from solution import add; assert add(2, 3) == 5'",
    }
    environment.reset(**example)
    assert tools["python"]("n = len(open('task.md').read())") == ""
    assert tools["python"]("n") == "9\n"
    assert "ZeroDivisionError" in tools["python"]("1/0") and "[runtime_error" in tools["python"]("1/0")
    tools["python"]("open('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')")
    assert environment.get_reward() == 1.0

    environment.reset(**{**example, "files": {}})  # the next rollout starts clean
    assert "NameError" in tools["python"]("n")
    assert environment.get_reward() == 0.0  # no solution.py: the test fails


def test_bash_environment_and_the_stateless_tool_function(url):
    environment = BashSandboxEnvironment(url=url)
    assert list(_trl_tools(environment)) == ["bash"]
    environment.reset(files={"a.txt": "hi\n"})
    assert environment.bash("cat a.txt; echo more >> a.txt") == "hi\n"
    assert environment.bash("wc -l < a.txt") == "2\n"
    assert environment.get_reward() is None  # the example named no test
    environment._close()

    tool = python_tool(url=url)
    assert tool("x = 1\nx + 1") == "2\n"
    assert "NameError" in tool("x")  # each call is a session of its own
