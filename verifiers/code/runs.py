"""A submission's tests in the sandbox: one job (its files written, its program built once), then
every test in one sandboxed run (``batch``, the default) or a run of its own each, and the special
judge's session for the outputs a checker decides.

Where the verifier starts programs (the checkers' own runs aside, :mod:`.checkers`), through the
sandbox's public face (:mod:`rewardhub.sandbox`). What goes in of a test is :func:`test_spec`, never
its expected value; each run is judged as it comes back, here in this process (:mod:`.outcomes`), so
a failure can stop the tests after it.
"""

from __future__ import annotations

import time
from typing import Any

from rewardhub.sandbox import Job, Language, Limits, RunResult, default_pool, run_batch

from .asserts import WholeCheck
from .checkers import checker_session, include_files
from .config import Config, stop_on_failure
from .outcomes import judged, skipped
from .testcases import CallTest, CheckerSpec, StdioTest, TestCase

__all__ = ["run_checker", "run_tests", "test_spec"]


def run_tests(
    lang: Language,
    code: str,
    tests: list[TestCase],
    config: Config,
    deadline: float,
    checked: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every test's outcome; with a checker, runs that went well are left ``pending`` with their output."""
    limits = Limits(timeout_s=config.test_timeout_s, memory_mb=config.memory_mb)
    stop = stop_on_failure(config)
    outcomes: list[dict[str, Any]] = []
    with default_pool().job(lang, code) as job:
        build_failure = job.setup()
        if config.batch and build_failure is None:  # a native program's tests are all stdin/stdout
            return _run_batched(job, tests, limits, config, deadline, checked), job.details
        for test in tests:
            failed_before = stop and outcomes and outcomes[-1]["verdict"] not in ("passed", "pending")
            if build_failure is not None or failed_before or time.monotonic() > deadline:
                outcomes.append(skipped(build_failure))
                continue
            outcome = _run_one(job, test, limits, config, checked)
            outcomes.append(outcome)
            if outcome["verdict"] == "compile_error":  # Python's parser: the same for every test
                build_failure = RunResult("compile_error", None, "", outcome.get("stderr", ""), 0.0)
        return outcomes, job.details


def _run_batched(
    job: Job,
    tests: list[TestCase],
    limits: Limits,
    config: Config,
    deadline: float,
    checked: bool,
) -> list[dict[str, Any]]:
    """All the tests in one sandboxed run, each in a fork of its own with its own clock (Python).

    The sandbox stops after a test that surely failed (it timed out, crashed, left no record) when
    failures stop the run; a wrong answer only this process can see, and the tests after it are
    then counted as skipped here, as they are when each test is a run of its own.
    """
    stop = stop_on_failure(config)
    specs = [test_spec(t) for t in tests]
    series = not config.fresh_process_per_case
    runs = run_batch(job, specs, limits, deadline - time.monotonic(), stop, last=True, stdio_series=series)
    outcomes: list[dict[str, Any]] = []
    for test, run in zip(tests, runs, strict=True):
        failed_before = stop and outcomes and outcomes[-1]["verdict"] not in ("passed", "pending")
        if run is None or failed_before:
            outcomes.append(skipped(None))
        elif run.verdict == "compile_error":
            outcomes.append(skipped(run))
        else:
            outcomes.append(judged(test, run, config, checked))
    return outcomes


def test_spec(test: TestCase) -> dict[str, Any]:
    """What the sandbox needs of a test to run it: never its expected value."""
    if isinstance(test, StdioTest):
        return {"kind": "stdio", "stdin": test.stdin}
    if isinstance(test, CallTest):
        return {"kind": "call", "fn_name": test.fn_name, "args": test.args}
    if isinstance(test, WholeCheck):
        return {"kind": "check", "source": test.source, "names": list(test.names)}
    return {"kind": "assert", "setup": test.setup, "leaves": list(test.leaves)}


def run_checker(
    checker: CheckerSpec,
    tests: list[TestCase],
    outcomes: list[dict[str, Any]],
    config: Config,
    deadline: float,
) -> None:
    """Judge each pending output with the reference's checker, in a sandbox of its own.

    Outputs not judged by the deadline count as failed, as tests not run by then do.
    """
    pending = [
        (test, outcome) for test, outcome in zip(tests, outcomes, strict=True) if outcome["verdict"] == "pending"
    ]
    if not pending:
        return
    files = {**include_files(default_pool().settings.checker_include_dir), **checker.files}
    limits = Limits(timeout_s=config.checker_timeout_s, memory_mb=max(config.memory_mb, 256))
    failed = False
    with checker_session(default_pool(), checker.language, checker.code, files, limits) as session:
        for test, outcome in pending:
            output = outcome.pop("stdout_for_checker")
            if (failed and stop_on_failure(config)) or time.monotonic() > deadline:
                outcome.update(verdict="skipped", passed=False)
                continue
            assert isinstance(test, StdioTest)
            verdict = session.judge(test.stdin, output, test.expected)
            outcome.update(verdict=verdict, passed=verdict == "passed")
            failed = failed or verdict != "passed"


def _run_one(job: Job, test: TestCase, limits: Limits, config: Config, checked: bool = False) -> dict[str, Any]:
    """One test as a run of its own."""
    spec = test_spec(test)
    if isinstance(test, StdioTest):
        return judged(test, job.run(test.stdin, limits), config, checked)
    mode = spec.pop("kind")
    return judged(test, job.run(b"", limits, {"mode": mode, **spec}), config, checked)
