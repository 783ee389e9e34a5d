"""Reference tests in the formats RL code datasets use (APPS, TACO, LiveCodeBench, HumanEval, MBPP).

- ``{"inputs": [...], "outputs": [...]}``: each input is fed on stdin, its output expected on
  stdout (strings, or lists of lines);
- ``{"fn_name": "f", "inputs": [[args], ...], "outputs": [result, ...]}``: ``f(*args)`` must
  return the result (``Solution().f`` too, LeetCode style);
- ``{"assert": "assert f(1) == 2\\n...", "entry_point": "f"?, "setup": "import math"?}``: one test
  per assert statement (``entry_point`` binds ``candidate`` for HumanEval's ``check(candidate)``;
  ``assert`` may also be MBPP's list of assert lines, ``setup`` its ``test_setup_code``);
- APPS's ``{"input_output": "<json>"}``, LiveCodeBench's ``[{"input": ..., "output": ...}]`` and
  any of these as a JSON string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rewardhub.sandbox.asserts import AssertPlan, plan_asserts

__all__ = ["CallTest", "StdioTest", "TestCase", "parse_tests"]


@dataclass(frozen=True)
class StdioTest:
    stdin: str
    expected: str


@dataclass(frozen=True)
class CallTest:
    fn_name: str
    args: list[Any]
    expected: Any


TestCase = StdioTest | CallTest | AssertPlan


def parse_tests(reference: Any) -> list[TestCase]:
    """The tests in ``reference``; ValueError says what is wrong with it."""
    if isinstance(reference, str):
        try:
            reference = json.loads(reference)
        except ValueError:
            raise ValueError("reference is a string but not JSON tests") from None
    if isinstance(reference, list):
        if not all(isinstance(t, dict) and "input" in t and "output" in t for t in reference):
            raise ValueError("a list of tests must hold {'input', 'output'} objects")
        return [StdioTest(_text(t["input"]), _text(t["output"])) for t in reference]
    if not isinstance(reference, dict):
        raise ValueError(f"tests must be an object, not {type(reference).__name__}")
    if "input_output" in reference:
        return parse_tests(reference["input_output"])
    if "assert" in reference:
        asserts = reference["assert"]
        if isinstance(asserts, list) and all(isinstance(line, str) for line in asserts):
            asserts = "\n".join(asserts)  # MBPP's test_list
        if not isinstance(asserts, str) or not isinstance(reference.get("setup", ""), str):
            raise ValueError("'assert' (and 'setup') must be Python source")
        try:
            return list(plan_asserts(f"{reference.get('setup', '')}\n{asserts}", reference.get("entry_point")))
        except SyntaxError as exc:
            raise ValueError(f"the assert tests do not parse: {exc}") from None
    inputs, outputs = reference.get("inputs"), reference.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError("tests need 'inputs' and 'outputs' lists (or 'assert')")
    if len(inputs) != len(outputs):
        raise ValueError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    if not inputs:
        raise ValueError("the reference has no tests")
    fn_name = reference.get("fn_name")
    if fn_name:
        return [
            CallTest(str(fn_name), args if isinstance(args, list) else [args], out)
            for args, out in zip(inputs, outputs, strict=True)
        ]
    return [StdioTest(_text(i), _text(o)) for i, o in zip(inputs, outputs, strict=True)]


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(line) for line in value)
    if not isinstance(value, str):
        raise ValueError(f"stdin/stdout tests need text, not {type(value).__name__}")
    return value
