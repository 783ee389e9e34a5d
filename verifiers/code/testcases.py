"""Reference tests in the formats code datasets ship them in, read into one list of tests.

Each format is read from a row shaped like its data set's (any of them may also come as a JSON
string):

- **stdin/stdout**: ``{"inputs": [...], "outputs": [...]}`` (strings, or lists of lines);
- **function calls**: the same with ``"fn_name"``; ``f(*args)`` must return the output
  (``Solution().f`` too, LeetCode style);
- **APPS / TACO**: ``{"input_output": "<json of the above>"}``;
- **CodeContests**: ``public_tests``, ``private_tests`` and ``generated_tests``, each
  ``{"input": [...], "output": [...]}``;
- **LiveCodeBench**: ``public_test_cases`` (JSON) and ``private_test_cases`` (base64 of zlib of a
  pickle of JSON, read by :func:`~rewardhub.verifiers.code.lcb.decode_private_tests`, never by
  ``pickle.loads``), each case ``{"input", "output", "testtype": "stdin" | "functional"}``;
  functional cases call ``metadata["func_name"]`` with one JSON argument per input line;
- **HumanEval**: ``{"test": "def check(candidate): ...", "entry_point": "f"}`` or the test text
  followed by ``check(f)``, as its harness runs it;
- **MBPP**: ``{"test_list": [...], "test_setup_code": "...", "test_imports": [...]}``;
- **verl's** ``test_cases``: ``{"inputs", "outputs", "fn_name", "assert_case": [...]}``;
- our own ``{"assert": "...", "setup": "...", "entry_point": ...}`` and LiveCodeBench-style lists
  of ``{"input", "output"}``.

Asserts become one test each where they can be split, else one :class:`WholeCheck` (see
:mod:`rewardhub.verifiers.code.asserts`). A ``"checker"`` beside the tests is a special judge for the
stdin/stdout tests (see :mod:`rewardhub.verifiers.code.checkers`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .asserts import AssertPlan, WholeCheck, plan_asserts
from .lcb import decode_private_tests

__all__ = ["CallTest", "CheckerSpec", "Reference", "StdioTest", "TestCase", "parse_reference", "parse_tests"]


@dataclass(frozen=True)
class StdioTest:
    stdin: str
    expected: str


@dataclass(frozen=True)
class CallTest:
    fn_name: str
    args: list[Any]
    expected: Any


TestCase = StdioTest | CallTest | AssertPlan | WholeCheck


@dataclass(frozen=True)
class CheckerSpec:
    """A special judge: ``checker <input> <output> <answer>``, exit 0 accepted, 1 wrong, 2 presentation."""

    language: str
    code: str
    files: dict[str, str] = field(default_factory=dict)
    """Files compiled beside it (``testlib.h``, say)."""


@dataclass(frozen=True)
class Reference:
    tests: list[TestCase]
    checker: CheckerSpec | None = None


CODECONTESTS_SPLITS = ("public_tests", "private_tests", "generated_tests")
LIVECODEBENCH_SPLITS = ("public_test_cases", "private_test_cases")


def parse_tests(reference: Any) -> list[TestCase]:
    """The tests in ``reference``; ValueError says what is wrong with it."""
    return parse_reference(reference).tests


def parse_reference(reference: Any) -> Reference:
    """The tests and the checker, if any, in ``reference``; ValueError says what is wrong with it."""
    reference = _json(reference, "reference")
    checker = None
    if isinstance(reference, dict) and "checker" in reference:
        reference = dict(reference)
        checker = _checker(reference.pop("checker"))
    tests = _tests(reference)
    if not tests:
        raise ValueError("the reference has no tests")
    if checker is not None and not all(isinstance(t, StdioTest) for t in tests):
        raise ValueError("a checker judges stdin/stdout tests only")
    return Reference(tests, checker)


def _tests(reference: Any) -> list[TestCase]:
    if isinstance(reference, list):
        return _case_list(reference, fn_name=None)
    if not isinstance(reference, dict):
        raise ValueError(f"tests must be an object, not {type(reference).__name__}")
    for wrapper in ("input_output", "test_cases"):  # APPS/TACO, verl
        if wrapper in reference:
            return _tests(_json(reference[wrapper], wrapper))
    if any(split in reference for split in CODECONTESTS_SPLITS):
        return [test for split in CODECONTESTS_SPLITS for test in _codecontests(reference.get(split), split)]
    if any(split in reference for split in LIVECODEBENCH_SPLITS):
        return _livecodebench(reference)
    if "test_list" in reference:
        return _mbpp(reference)
    if "test" in reference and isinstance(reference["test"], str):  # HumanEval
        return _asserts(reference["test"], "", reference.get("entry_point"))
    if "assert" in reference:
        return _asserts(reference["assert"], reference.get("setup", ""), reference.get("entry_point"))
    tests: list[TestCase] = []
    if "inputs" in reference or "outputs" in reference:
        tests += _inputs_outputs(reference)
    if reference.get("assert_case"):  # verl
        for case in _strings(reference["assert_case"], "assert_case"):
            tests += _asserts(case, "", None)
    if not tests and not ("inputs" in reference or "assert_case" in reference):
        raise ValueError("tests need 'inputs' and 'outputs' lists (or asserts, or one of the known formats)")
    return tests


def _inputs_outputs(reference: dict[str, Any]) -> list[TestCase]:
    inputs, outputs = reference.get("inputs"), reference.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError("tests need 'inputs' and 'outputs' lists (or 'assert')")
    if len(inputs) != len(outputs):
        raise ValueError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = reference.get("fn_name")
    if fn_name:
        return [_call(str(fn_name), args, out) for args, out in zip(inputs, outputs, strict=True)]
    return [StdioTest(_text(i), _text(o)) for i, o in zip(inputs, outputs, strict=True)]


def _call(fn_name: str, args: Any, expected: Any) -> CallTest:
    """APPS passes a list of arguments and values; LiveCodeBench and verl one JSON argument per line."""
    if isinstance(args, str):
        return CallTest(fn_name, _json_lines(args), _json(expected, "a functional test's output"))
    return CallTest(fn_name, args if isinstance(args, list) else [args], expected)


def _codecontests(split: Any, name: str) -> list[TestCase]:
    if split is None:
        return []
    if not isinstance(split, dict) or not isinstance(split.get("input"), list):
        raise ValueError(f"{name} must be {{'input': [...], 'output': [...]}}")
    inputs, outputs = split["input"], split.get("output")
    if not isinstance(outputs, list) or len(outputs) != len(inputs):
        raise ValueError(f"{name} has {len(inputs)} inputs but not as many outputs")
    return [StdioTest(_text(i), _text(o)) for i, o in zip(inputs, outputs, strict=True)]


def _livecodebench(row: dict[str, Any]) -> list[TestCase]:
    metadata = _json(row.get("metadata") or {}, "metadata")
    fn_name = metadata.get("func_name") if isinstance(metadata, dict) else None
    cases: list[Any] = []
    for split in LIVECODEBENCH_SPLITS:
        raw = row.get(split)
        if raw in (None, "", []):
            continue
        if split == "private_test_cases" and isinstance(raw, str) and not raw.lstrip().startswith("["):
            raw = decode_private_tests(raw)
        parsed = _json(raw, split)
        if not isinstance(parsed, list):
            raise ValueError(f"{split} must be a list of test cases")
        cases += parsed
    return _case_list(cases, fn_name)


def _case_list(cases: list[Any], fn_name: str | None) -> list[TestCase]:
    tests: list[TestCase] = []
    for case in cases:
        if not (isinstance(case, dict) and "input" in case and "output" in case):
            raise ValueError("a list of tests must hold {'input', 'output'} objects")
        if case.get("testtype") == "functional":
            if not fn_name:
                raise ValueError("functional tests need the function's name (LiveCodeBench's metadata.func_name)")
            tests.append(_call(fn_name, _string(case["input"], "input"), case["output"]))
        else:
            tests.append(StdioTest(_text(case["input"]), _text(case["output"])))
    return tests


def _mbpp(row: dict[str, Any]) -> list[TestCase]:
    imports = row.get("test_imports") or []
    setup = "\n".join(
        [*_strings(imports, "test_imports"), _string(row.get("test_setup_code") or "", "test_setup_code")]
    )
    return _asserts(_strings(row["test_list"], "test_list"), setup, None)


def _asserts(asserts: Any, setup: Any, entry_point: Any) -> list[TestCase]:
    if isinstance(asserts, list):
        asserts = "\n".join(_strings(asserts, "the assert list"))  # MBPP's test_list
    if not isinstance(asserts, str) or not isinstance(setup, str):
        raise ValueError("'assert' (and 'setup') must be Python source")
    if entry_point is not None and not isinstance(entry_point, str):
        raise ValueError("'entry_point' must be a function name")
    try:
        return list(plan_asserts(f"{setup}\n{asserts}" if setup else asserts, entry_point))
    except SyntaxError as exc:
        raise ValueError(f"the assert tests do not parse: {exc}") from None


def _checker(raw: Any) -> CheckerSpec:
    if not isinstance(raw, dict) or set(raw) - {"language", "code", "files"}:
        raise ValueError("'checker' must be {'language', 'code', 'files'?}")
    language, code, files = raw.get("language"), raw.get("code"), raw.get("files") or {}
    if not isinstance(language, str) or not isinstance(code, str) or not code.strip():
        raise ValueError("a checker needs a 'language' and its 'code'")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError("a checker's 'files' must map names to text")
    return CheckerSpec(language, code, dict(files))


def _json(value: Any, what: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise ValueError(f"{what} is a string but not JSON") from None


def _json_lines(text: str) -> list[Any]:
    return [_json(line, "a functional test's input line") for line in text.split("\n") if line.strip()]


def _strings(values: Any, what: str) -> list[str]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{what} must be a list of strings")
    return values


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string")
    return value


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(line) for line in value)
    if not isinstance(value, str):
        raise ValueError(f"stdin/stdout tests need text, not {type(value).__name__}")
    return value
