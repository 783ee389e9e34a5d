"""Code problems read from a data set's rows: a reference solution, its tests, and the function they call.

Rows come as their data sets ship them:

- **HumanEval**: ``task_id``, ``prompt``, ``canonical_solution``, ``test``, ``entry_point`` (the
  solution is the prompt followed by the canonical body, as HumanEval's own harness runs it);
- **MBPP**: ``task_id``, ``code``, ``test_list`` (``test_setup_code``, ``test_imports``);
- **ours**: ``id``, ``solution``, ``tests`` (anything the ``code`` verifier reads as a reference:
  see :mod:`rewardhub.sandbox.testcases`), ``entry_point`` optional.

``tests`` is what the ``code`` verifier is given as the reference; ``calls`` are the literal
argument lists of the tests' own calls of the function, the seeds of fresh inputs
(:mod:`rewardhub.audit.fresh_inputs`). Pure.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from rewardhub.audit.fresh_inputs import literal_calls
from rewardhub.errors import InvalidRequest

__all__ = ["CodeTask", "code_task"]


@dataclass(frozen=True)
class CodeTask:
    id: str
    solution: str
    tests: Any
    """The reference the ``code`` verifier scores against."""
    entry_point: str | None
    setup: str = ""
    """Code the tests run before their asserts (MBPP's imports and set-up)."""
    calls: list[list[Any]] = field(default_factory=list)


def _defined(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def _called(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _entry(solution: str, test_source: str) -> str | None:
    """The function the solution defines and the tests call (not ``len`` from ``assert len(f(x)) == 2``)."""
    defined = set(_defined(solution))
    return next((name for name in _called(test_source) if name in defined), None)


def _candidate_names(test_source: str, entry: str | None) -> list[str]:
    """HumanEval's tests call the function as ``check``'s parameter (``candidate``)."""
    names = [entry] if entry else []
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return names
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check" and node.args.args:
            names.append(node.args.args[0].arg)
    return names


def code_task(row: dict[str, Any], where: str) -> CodeTask:
    """One row as a problem; an InvalidRequest names the row when it is none of the shapes above."""
    if "canonical_solution" in row and "test" in row:  # HumanEval
        solution = str(row.get("prompt", "")) + str(row["canonical_solution"])
        entry = row.get("entry_point") or _entry(solution, row["test"])
        tests: Any = {"test": row["test"], "entry_point": entry}
        return _task(row.get("task_id"), solution, tests, entry, "", row["test"], where)
    if "code" in row and "test_list" in row:  # MBPP
        setup = "\n".join([*(row.get("test_imports") or []), row.get("test_setup_code") or ""]).strip()
        tests = {key: row[key] for key in ("test_list", "test_setup_code", "test_imports") if row.get(key)}
        source = "\n".join(row["test_list"])
        return _task(row.get("task_id"), row["code"], tests, _entry(row["code"], source), setup, source, where)
    if "solution" in row and "tests" in row:
        tests = row["tests"]
        if isinstance(tests, str):
            try:
                tests = json.loads(tests)
            except ValueError:
                raise InvalidRequest(f"{where}: tests is a string but not JSON") from None
        source = _test_source(tests)
        entry = row.get("entry_point") or (tests.get("fn_name") if isinstance(tests, dict) else None)
        entry = entry or _entry(row["solution"], source)
        setup = tests.get("setup", "") if isinstance(tests, dict) else ""
        task = _task(row.get("id"), row["solution"], tests, entry, setup, source, where)
        if isinstance(tests, dict) and tests.get("fn_name") and isinstance(tests.get("inputs"), list):
            calls = [list(args) for args in tests["inputs"] if isinstance(args, list)]
            return CodeTask(task.id, task.solution, tests, entry, setup, calls)
        return task
    raise InvalidRequest(
        f"{where}: not a code problem: give id, solution and tests (or a HumanEval or MBPP row as shipped)"
    )


def _test_source(tests: Any) -> str:
    if not isinstance(tests, dict):
        return ""
    parts = [tests.get("test"), tests.get("assert")]
    parts += list(tests.get("test_list") or []) + list(tests.get("assert_case") or [])
    return "\n".join(part for part in parts if isinstance(part, str))


def _task(
    task_id: Any, solution: str, tests: Any, entry: str | None, setup: str, test_source: str, where: str
) -> CodeTask:
    if task_id is None:
        raise InvalidRequest(f"{where}: a problem needs an id (id or task_id)")
    if not isinstance(solution, str) or not solution.strip():
        raise InvalidRequest(f"{where}: the reference solution is empty")
    calls = literal_calls(test_source, _candidate_names(test_source, entry)) if entry else []
    return CodeTask(str(task_id), solution, tests, entry, setup, calls)
