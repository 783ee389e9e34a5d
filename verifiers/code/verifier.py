"""``code``: does the program in the response pass the reference tests? Run in the sandbox.

Judges the **last fenced code block** of the response against the reference tests, in the
formats of HumanEval, MBPP, APPS/TACO, CodeContests, LiveCodeBench and verl (stdin/stdout,
function calls, asserts; see :mod:`rewardhub.verifiers.code.testcases`), optionally with a special
judge, ``"checker": {"language", "code"}``, for problems with several right answers (see
:mod:`rewardhub.verifiers.code.checkers`). The score is the fraction of tests passed, or 1/0 with
``scoring: all_or_nothing``; every test's verdict is in ``details["tests"]``.

What it judges: behaviour on the given tests, under time and memory limits. What it does not:
style, efficiency beyond the limits, or tests it was not given. A response without a code block
scores 0 (that is the policy's failure). A sample the sandbox could not run (the machine's
failure, not the program's) gets ``status: "error"`` with ``details["verdict"] = "sandbox_error"``,
so a trainer masks it instead of punishing the policy; so does a checker that gives no judgement
(``details["verdict"] = "checker_error"``).

The harness cannot be talked into a pass: expected outputs and the comparison stay in this
process; a function's result comes back strictly typed on a private channel and is compared
here; exit status 0 alone never passes a test; a program that exits before its test ran fails it;
a test run whole (asserts in loops) passes only on the record its own process writes after the
check returned, a process the program's code never runs in. No expected value, test source or
harness state is ever in memory the program can read: a whole test runs as a sandboxed run of its
own and is read only after the program's process is forked
(:mod:`rewardhub.sandbox.inside.check_process`); an assert comparing with a value the test computes
runs whole too (:mod:`rewardhub.verifiers.code.asserts`).

A submission's tests all run in **one sandboxed run** (``batch``, the default; see
:mod:`rewardhub.sandbox.batch`), and every test has its own clock: a test that hangs or kills its
process fails alone and a fresh process goes on with the next. For Python, asserts and function
calls run in the run's own process after one run of the program (as in HumanEval's own harness),
each reporting its values as it ends, while this process keeps each test's clock and output cap:
one fork per submission. Everything else runs under a coordinator inside the sandbox
(:mod:`rewardhub.sandbox.inside.batch`) that runs none of the program and starts the test
processes: stdin/stdout cases share one, the program run afresh for each case with the process
reset to a fresh interpreter's state in between (see :mod:`rewardhub.sandbox.inside.stdio_cases`;
``fresh_process_per_case`` gives each a fork of its own); a built native program (C, C++, Rust, Go, Java, JavaScript, ...) is spawned once per stdin/stdout
case, on pipes of its own. Each test's record is checked on its own (a program that writes on its
channel spoils only its own test), and what comes back says what happened, never whether a test
passed. With ``all_or_nothing`` the run stops after the first test that surely failed (timed out,
crashed, left no record); a wrong answer only this process can see, so the tests after it still
run, under their own clocks, and count as skipped. ``batch: false`` runs each test as a sandboxed
run of its own.

**In a session** (a sample with ``session_id``, a live session of the caller's API key): the tests
run inside that session's sandbox against a fork of the session's interpreter, so they see its
files and, for Python, its variables (a function the agent defined in an earlier
``/v1/sessions/{id}/run`` call); the response's last code block, if it has one, runs first in that
fork, and without one the session's state alone answers the tests. The variables a test changes go
with its fork (scoring leaves the session's interpreter as it was); a file it writes stays. Tests
are Python's (stdin/stdout, function calls, asserts; a checker runs outside the session, as
always). An assert or whole check runs in a process the session's code never ran in (the session's
judge, :mod:`rewardhub.sandbox.inside.session_judge`), which reaches the session's functions as
stubs across a process boundary and its values as plain copies: a session whose calls rewrote its
interpreter (built-ins, ``unittest``, the kernel) or whose functions look for expected values on
the stack or in ``gc`` changes no test. An unknown, deleted, expired or lost session, or
another key's, is ``status: "error"`` naming the session and why (404 or 410), never a 0; these
samples are never cached.
"""

from __future__ import annotations

import re
import time
from typing import Any

from rewardhub.errors import VerifierError
from rewardhub.sandbox import (
    CheckerFailed,
    Job,
    Language,
    Limits,
    RunResult,
    SandboxError,
    SandboxUnavailable,
    UnsupportedLanguage,
    compile_filter,
    default_pool,
)
from rewardhub.sandbox import language as find_language
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier

from .asserts import WholeCheck
from .checkers import run_checker
from .config import Config, budget_s, stop_on_failure
from .outcomes import judged, result, skipped
from .session import score_in_session
from .testcases import CallTest, StdioTest, TestCase, parse_reference

__all__ = ["CodeVerifier", "last_code_block"]

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)


def last_code_block(text: str) -> tuple[str | None, str] | None:
    """The last complete fenced block as (its language tag or None, its code)."""
    blocks = _FENCE.findall(text)
    if not blocks:
        return None
    tag, code = blocks[-1]
    return (tag.lower() or None), code


class CodeVerifier(Verifier):
    """Runs the response's last code block against the reference tests in the sandbox."""

    name = "code"
    version = "1"
    kind = "code"

    Config = Config

    @classmethod
    def warm_up(cls) -> None:
        """In the fork server: the system-call filter, compiled once (a subprocess) for every worker."""
        compile_filter()

    @classmethod
    def warm_worker(cls) -> None:
        """In each code worker as it starts: its warm sandbox (a worker runs one sample at a time, so
        one), which the first sample would otherwise wait for. A machine that cannot isolate code
        raises here, is logged, and its samples say why when they come."""
        default_pool().warm_up(1)

    def score(self, sample: Sample, config: Config) -> Result:  # type: ignore[override]
        try:
            reference = parse_reference(sample.reference)
        except ValueError as exc:
            raise VerifierError(f"cannot read the reference tests: {exc}") from None
        tests = reference.tests[: config.max_tests] if config.max_tests else reference.tests
        block = last_code_block(sample.response)
        if block is None and sample.session_id is not None:  # the session's own state answers the tests
            block = (None, "")
        if block is None:
            return Result.ok(0.0, passed=0, total=len(tests), reason="no fenced code block in the response")
        tag, code = block
        if sample.session_id is not None:
            specs = [_test_spec(test) for test in tests]
            return score_in_session(sample, sample.session_id, code, tag, tests, specs, reference.checker, config)
        # read off the config before the sandbox is reached, so its part is one stay
        deadline, stop = time.monotonic() + budget_s(config), stop_on_failure(config)
        try:
            chosen = find_language(tag or "python") if config.language == "auto" else find_language(config.language)
        except UnsupportedLanguage as exc:
            if config.language != "auto":
                raise VerifierError(exc.message) from None
            return Result.ok(0.0, passed=0, total=len(tests), reason=f"cannot run a {tag!r} code block")
        if not chosen.in_process and not all(isinstance(t, StdioTest) for t in tests):
            raise VerifierError(f"function-call and assert tests need Python, not {chosen.name}")
        try:
            outcomes, sandbox = _run_tests(chosen, code, tests, config, deadline, stop, reference.checker is not None)
            if reference.checker is not None:
                run_checker(reference.checker, tests, outcomes, config, deadline)
        except CheckerFailed as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="checker_error")
        except UnsupportedLanguage as exc:
            raise VerifierError(f"the checker's language: {exc.message}") from None
        except (SandboxError, SandboxUnavailable) as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="sandbox_error")
        return result(outcomes, sandbox, chosen, config)


def _run_tests(
    lang: Language,
    code: str,
    tests: list[TestCase],
    config: Config,
    deadline: float,
    stop: bool,
    checked: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every test's outcome, and what the sandbox was; with a checker, runs that went well are left
    ``pending`` with their output.

    Batched (the default), the sandbox's part is one call: the pool builds the submission, runs every
    test and takes its sandbox back before any run is judged. One run per test, each run is judged as
    it comes back, so a failure (a wrong answer too) can stop the tests after it.
    """
    limits = Limits(timeout_s=config.test_timeout_s, memory_mb=config.memory_mb)
    if config.batch:
        specs = [_test_spec(t) for t in tests]
        series = not config.fresh_process_per_case
        batch = default_pool().run_tests(lang, code, specs, limits, deadline, stop, stdio_series=series)
        if batch.build_failure is not None:
            return [skipped(batch.build_failure) for _ in tests], batch.sandbox
        return _judged_batch(tests, batch.runs, config, stop, checked), batch.sandbox
    with default_pool().job(lang, code) as job:
        build_failure, sandbox = job.setup(), job.details
        return _run_one_by_one(job, tests, limits, config, deadline, stop, checked, build_failure), sandbox


def _judged_batch(
    tests: list[TestCase], runs: list[RunResult | None], config: Config, stop: bool, checked: bool
) -> list[dict[str, Any]]:
    """The outcomes of a batch (all the tests in one sandboxed run, each with its own clock).

    The sandbox stops after a test that surely failed (it timed out, crashed, left no record) when
    failures stop the run; a wrong answer only this process can see, and the tests after it are
    then counted as skipped here, as they are when each test is a run of its own.
    """
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


def _run_one_by_one(
    job: Job,
    tests: list[TestCase],
    limits: Limits,
    config: Config,
    deadline: float,
    stop: bool,
    checked: bool,
    build_failure: RunResult | None,
) -> list[dict[str, Any]]:
    """Each test as a run of its own, judged as it comes back (every test skipped after a failed build)."""
    outcomes: list[dict[str, Any]] = []
    for test in tests:
        failed_before = stop and outcomes and outcomes[-1]["verdict"] not in ("passed", "pending")
        if build_failure is not None or failed_before or time.monotonic() > deadline:
            outcomes.append(skipped(build_failure))
            continue
        outcome = _run_one(job, test, limits, config, checked)
        outcomes.append(outcome)
        if outcome["verdict"] == "compile_error":  # Python's parser: the same for every test
            build_failure = RunResult("compile_error", None, "", outcome.get("stderr", ""), 0.0)
    return outcomes


def _test_spec(test: TestCase) -> dict[str, Any]:
    """What the sandbox needs of a test to run it: never its expected value."""
    if isinstance(test, StdioTest):
        return {"kind": "stdio", "stdin": test.stdin}
    if isinstance(test, CallTest):
        return {"kind": "call", "fn_name": test.fn_name, "args": test.args}
    if isinstance(test, WholeCheck):
        return {"kind": "check", "source": test.source, "names": list(test.names)}
    return {"kind": "assert", "setup": test.setup, "leaves": list(test.leaves)}


def _run_one(job: Job, test: TestCase, limits: Limits, config: Config, checked: bool = False) -> dict[str, Any]:
    """One test as a run of its own."""
    spec = _test_spec(test)
    if isinstance(test, StdioTest):
        return judged(test, job.run(test.stdin, limits), config, checked)
    mode = spec.pop("kind")
    return judged(test, job.run(b"", limits, {"mode": mode, **spec}), config, checked)
