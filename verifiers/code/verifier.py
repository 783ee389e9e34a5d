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
from typing import Any, Literal

from pydantic import Field

from rewardhub.errors import RewardhubError, VerifierError
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
    decode_value,
    default_pool,
    run_batch,
)
from rewardhub.sandbox import language as find_language
from rewardhub.sessions import code_tests_with_grant
from rewardhub.types import Result, Sample
from rewardhub.verifier import CALLER_FIELD, Verifier, VerifierConfig

from .asserts import AssertPlan, LeafFailed, WholeCheck
from .checkers import checker_session, include_files
from .compare import same_output, same_value
from .testcases import CallTest, CheckerSpec, StdioTest, TestCase, parse_reference

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

    class Config(VerifierConfig):
        language: str = Field("python", description="Language of the program, or 'auto' for the code block's own tag.")
        scoring: Literal["fraction", "all_or_nothing"] = Field(
            "fraction", description="fraction: share of tests passed; all_or_nothing: 1 only if every test passes."
        )
        test_timeout_s: float = Field(6.0, gt=0, le=120, description="Wall-clock limit of each test run.")
        memory_mb: int = Field(
            512, ge=32, le=16384, description="Memory of each test run (all its processes together)."
        )
        max_tests: int | None = Field(None, ge=1, description="Run at most this many tests (the first ones).")
        stop_on_failure: bool | None = Field(
            None,
            description="Skip the remaining tests after the first failure (counted as failed); "
            "unset: only with all_or_nothing scoring, where they cannot change the score.",
        )
        total_timeout_s: float = Field(
            60.0,
            gt=0,
            description="Stop starting tests after this much time; the rest count as failed. Kept under the "
            "sample's hard limit so that a program that times out on every test still gets a score, not a timeout.",
        )
        compare: Literal["lines", "tokens", "exact"] = Field(
            "lines", description="stdout comparison: per line ignoring surrounding spaces, per token, or exact."
        )
        float_tolerance: float = Field(
            1e-6, ge=0, description="Numbers in outputs and results may differ by this much (0: exactly)."
        )
        batch: bool = Field(
            True,
            description="All the tests in one sandboxed run, each with its own clock (false: one sandboxed run "
            "per test).",
        )
        fresh_process_per_case: bool = Field(
            False,
            description="Python, batched: each stdin/stdout case in a fork of its own, instead of one after "
            "another in one process reset to a fresh interpreter's state between cases (same verdicts; "
            "what a reset cannot undo is in rewardhub.sandbox.inside.stdio_cases).",
        )
        checker_timeout_s: float = Field(
            10.0, gt=0, le=120, description="Wall-clock limit of each run of a reference's checker (special judge)."
        )

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
            return _score_in_session(sample, sample.session_id, code, tag, tests, reference.checker, config)
        try:
            chosen = find_language(tag or "python") if config.language == "auto" else find_language(config.language)
        except UnsupportedLanguage as exc:
            if config.language != "auto":
                raise VerifierError(exc.message) from None
            return Result.ok(0.0, passed=0, total=len(tests), reason=f"cannot run a {tag!r} code block")
        if not chosen.in_process and not all(isinstance(t, StdioTest) for t in tests):
            raise VerifierError(f"function-call and assert tests need Python, not {chosen.name}")
        deadline = time.monotonic() + _budget_s(config)
        try:
            outcomes, sandbox = _run_tests(chosen, code, tests, config, deadline, reference.checker is not None)
            if reference.checker is not None:
                _run_checker(reference.checker, tests, outcomes, config, deadline)
        except CheckerFailed as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="checker_error")
        except UnsupportedLanguage as exc:
            raise VerifierError(f"the checker's language: {exc.message}") from None
        except (SandboxError, SandboxUnavailable) as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="sandbox_error")
        return _result(outcomes, sandbox, chosen, config)


def _score_in_session(
    sample: Sample,
    session_id: str,
    code: str,
    tag: str | None,
    tests: list[TestCase],
    checker: CheckerSpec | None,
    config: CodeVerifier.Config,
) -> Result:
    """The tests in a live session of the caller's, each in a fork of its interpreter (its
    variables and files, the response's code run first when it has some): see the module docstring."""
    if config.language not in ("python", "auto") or (config.language == "auto" and tag not in (None, "python", "py")):
        raise VerifierError(f"tests run in a session are Python's: not {tag or config.language!r}")
    given = sample.metadata.get(CALLER_FIELD)
    if not isinstance(given, dict):
        raise VerifierError(
            f"session {session_id!r}: a sample judged in a session is scored only through rewardhub serve's "
            "/v1/score, /v1/jobs and /get_reward"
        )
    deadline = time.monotonic() + _budget_s(config)
    specs = [_test_spec(test) for test in tests]
    try:
        runs = code_tests_with_grant(
            session_id, given, code, specs, config.test_timeout_s, _budget_s(config), _stop_on_failure(config)
        )
    except RewardhubError as exc:  # not found or deleted (404), expired or lost (410), another key's, busy
        raise VerifierError(
            f"session {session_id!r} cannot be judged: {exc.error_type} ({exc.status_code}): {exc.message}"
        ) from None
    outcomes = []
    for test, run in zip(tests, runs, strict=True):
        if run is None:
            outcomes.append(_skipped(None))
        elif run.verdict == "compile_error":
            outcomes.append(_skipped(run))
        else:
            outcomes.append(_judged(test, run, config, checker is not None))
    if checker is not None:
        try:
            _run_checker(checker, tests, outcomes, config, deadline)
        except CheckerFailed as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="checker_error")
        except (SandboxError, SandboxUnavailable) as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="sandbox_error")
    return _result(outcomes, {"session_id": session_id}, find_language("python"), config)


def _budget_s(config: CodeVerifier.Config) -> float:
    """Time to start tests (and checks) in, kept under the sample's hard limit."""
    return min(config.total_timeout_s, 0.8 * config.timeout_s) if config.timeout_s else config.total_timeout_s


def _stop_on_failure(config: CodeVerifier.Config) -> bool:
    return config.stop_on_failure if config.stop_on_failure is not None else config.scoring == "all_or_nothing"


def _run_tests(
    lang: Language,
    code: str,
    tests: list[TestCase],
    config: CodeVerifier.Config,
    deadline: float,
    checked: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every test's outcome; with a checker, runs that went well are left ``pending`` with their output."""
    limits = Limits(timeout_s=config.test_timeout_s, memory_mb=config.memory_mb)
    stop_on_failure = _stop_on_failure(config)
    outcomes: list[dict[str, Any]] = []
    with default_pool().job(lang, code) as job:
        build_failure = job.setup()
        if config.batch and build_failure is None:  # a native program's tests are all stdin/stdout
            return _run_batched(job, tests, limits, config, deadline, checked), job.details
        for test in tests:
            failed_before = stop_on_failure and outcomes and outcomes[-1]["verdict"] not in ("passed", "pending")
            if build_failure is not None or failed_before or time.monotonic() > deadline:
                outcomes.append(_skipped(build_failure))
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
    config: CodeVerifier.Config,
    deadline: float,
    checked: bool,
) -> list[dict[str, Any]]:
    """All the tests in one sandboxed run, each in a fork of its own with its own clock (Python).

    The sandbox stops after a test that surely failed (it timed out, crashed, left no record) when
    failures stop the run; a wrong answer only this process can see, and the tests after it are
    then counted as skipped here, as they are when each test is a run of its own.
    """
    stop_on_failure = _stop_on_failure(config)
    specs = [_test_spec(t) for t in tests]
    series = not config.fresh_process_per_case
    runs = run_batch(job, specs, limits, deadline - time.monotonic(), stop_on_failure, last=True, stdio_series=series)
    outcomes: list[dict[str, Any]] = []
    for test, run in zip(tests, runs, strict=True):
        failed_before = stop_on_failure and outcomes and outcomes[-1]["verdict"] not in ("passed", "pending")
        if run is None or failed_before:
            outcomes.append(_skipped(None))
        elif run.verdict == "compile_error":
            outcomes.append(_skipped(run))
        else:
            outcomes.append(_judged(test, run, config, checked))
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


def _run_checker(
    checker: CheckerSpec,
    tests: list[TestCase],
    outcomes: list[dict[str, Any]],
    config: CodeVerifier.Config,
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
            if (failed and _stop_on_failure(config)) or time.monotonic() > deadline:
                outcome.update(verdict="skipped", passed=False)
                continue
            assert isinstance(test, StdioTest)
            verdict = session.judge(test.stdin, output, test.expected)
            outcome.update(verdict=verdict, passed=verdict == "passed")
            failed = failed or verdict != "passed"


def _run_one(
    job: Job, test: TestCase, limits: Limits, config: CodeVerifier.Config, checked: bool = False
) -> dict[str, Any]:
    """One test as a run of its own."""
    spec = _test_spec(test)
    if isinstance(test, StdioTest):
        return _judged(test, job.run(test.stdin, limits), config, checked)
    mode = spec.pop("kind")
    return _judged(test, job.run(b"", limits, {"mode": mode, **spec}), config, checked)


def _judged(test: TestCase, run: RunResult, config: CodeVerifier.Config, checked: bool = False) -> dict[str, Any]:
    """A test's outcome from its run: the comparison with the expected value happens here."""
    if isinstance(test, StdioTest):
        if checked and run.ok:  # the checker decides, later and elsewhere
            return {**_outcome(run, False), "verdict": "pending", "stdout_for_checker": run.stdout}
        passed = run.ok and same_output(run.stdout, test.expected, config.compare, config.float_tolerance)
        return _outcome(run, passed)
    if isinstance(test, CallTest):
        value, problem = _record_value(run)
        passed = problem is None and same_value(value, test.expected, config.float_tolerance)
        return _outcome(run, passed, problem)
    if isinstance(test, WholeCheck):
        passed, problem = _check_passed(run)
        return {**_outcome(run, passed, problem, "whole test"), "why_whole": test.why}
    passed, problem = _assert_holds(run, test)
    return _outcome(run, passed, problem, test.source)


def _check_passed(run: RunResult) -> tuple[bool, str | None]:
    """Passed only on the test process's own record, written after the check returned."""
    record = run.record or {}
    if run.ok and record == {"check": "passed"}:
        return True, None
    if record.get("check") == "failed":
        return False, str(record.get("message", "the check failed"))[:500]
    if not run.ok:
        return False, _record_error(run)
    return False, run.details.get("record_problem") or "no result: the test did not run to its end"


def _record_value(run: RunResult) -> tuple[Any, str | None]:
    """The function's result from the run's one record, or why there is none."""
    if not run.ok:
        return None, _record_error(run)
    record = run.record
    if record is None:
        return None, run.details.get("record_problem") or "no result: the program ended before its test ran"
    if "error" in record:
        return None, str(record["error"])[:500]
    try:
        return decode_value(record["value"]), None
    except (KeyError, ValueError, TypeError) as exc:
        return None, f"malformed result: {exc}"


def _assert_holds(run: RunResult, plan: AssertPlan) -> tuple[bool, str | None]:
    if not run.ok:
        return False, _record_error(run)
    record = run.record
    if record is None or "error" in record or not isinstance(record.get("values"), list):
        reason = (
            (record or {}).get("error")
            or run.details.get("record_problem")
            or "no result: the program ended before its test ran"
        )
        return False, str(reason)[:500]
    if len(record["values"]) != len(plan.leaves):
        return False, "wrong number of values in the result record"
    values: list[Any] = []
    for item in record["values"]:
        try:
            values.append(decode_value(item["value"]) if "value" in item else LeafFailed(str(item.get("error"))[:500]))
        except (KeyError, ValueError, TypeError) as exc:
            values.append(LeafFailed(f"malformed value: {exc}"))
    try:
        return plan.holds(values), None
    except LeafFailed as exc:
        return False, str(exc)
    except (
        TypeError,
        ValueError,
        ArithmeticError,
        LookupError,
    ) as exc:  # the values do not support the test's operations
        return False, f"{type(exc).__name__}: {exc}"[:500]


def _record_error(run: RunResult) -> str | None:
    error = (run.record or {}).get("error")
    return str(error)[:500] if error else None


def _outcome(run: RunResult, passed: bool, problem: str | None = None, source: str | None = None) -> dict[str, Any]:
    verdict = "passed" if passed else ("wrong_answer" if run.ok else run.verdict)
    outcome: dict[str, Any] = {"verdict": verdict, "passed": passed, "elapsed_ms": round(run.elapsed_ms, 3)}
    if source:
        outcome["test"] = source
    if problem:
        outcome["message"] = problem
    elif not run.ok and run.verdict != "sandbox_error":
        outcome["stderr"] = run.stderr[-1000:]
    if run.verdict == "sandbox_error":
        outcome["message"] = run.details.get("message", "the sandbox failed")
    return outcome


def _skipped(build_failure: RunResult | None) -> dict[str, Any]:
    if build_failure is None:
        return {"verdict": "skipped", "passed": False, "elapsed_ms": 0.0}
    return {
        "verdict": build_failure.verdict,
        "passed": False,
        "elapsed_ms": 0.0,
        "stderr": build_failure.stderr[-1000:],
    }


def _result(
    outcomes: list[dict[str, Any]], sandbox: dict[str, Any], lang: Language, config: CodeVerifier.Config
) -> Result:
    passed = sum(1 for o in outcomes if o["passed"])
    details = {"passed": passed, "total": len(outcomes), "language": lang.name, "sandbox": sandbox, "tests": outcomes}
    failures = [o for o in outcomes if o["verdict"] == "sandbox_error"]
    if failures:
        message = f"the sandbox failed on {len(failures)} of {len(outcomes)} tests: {failures[0].get('message')}"
        return Result.failed(message, score=config.failure_score, verdict="sandbox_error", **details)
    if config.scoring == "all_or_nothing":
        score = 1.0 if passed == len(outcomes) else 0.0
    else:
        score = passed / len(outcomes)
    return Result.ok(score, **details)
