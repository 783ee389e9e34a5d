"""What a run means: each test's outcome, and the sample's :class:`~rewardhub.types.Result`.

The sandbox says what happened (a :class:`~rewardhub.sandbox.RunResult`: its verdict, its output, the
record the test's process wrote, never whether it passed). Whether the test passed is decided here,
against the expected value that never left this process: stdout compared by :mod:`.compare`, a
function's value read from its record and compared, an assert's values put back into its plan
(:mod:`.asserts`), a whole test passed only on its own process's record. A run the sandbox could not
make (``sandbox_error``) is no verdict on the program: the sample is an ``error``.
"""

from __future__ import annotations

from typing import Any

from rewardhub.sandbox import Language, RunResult, decode_value
from rewardhub.types import Result

from .asserts import AssertPlan, LeafFailed, WholeCheck
from .compare import same_output, same_value
from .config import Config
from .testcases import CallTest, StdioTest, TestCase

__all__ = ["judged", "result", "skipped"]


def judged(test: TestCase, run: RunResult, config: Config, checked: bool = False) -> dict[str, Any]:
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


def skipped(build_failure: RunResult | None) -> dict[str, Any]:
    if build_failure is None:
        return {"verdict": "skipped", "passed": False, "elapsed_ms": 0.0}
    return {
        "verdict": build_failure.verdict,
        "passed": False,
        "elapsed_ms": 0.0,
        "stderr": build_failure.stderr[-1000:],
    }


def result(outcomes: list[dict[str, Any]], sandbox: dict[str, Any], lang: Language, config: Config) -> Result:
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
