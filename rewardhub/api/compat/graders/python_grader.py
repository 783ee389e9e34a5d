"""The ``python`` grader: the user's ``grade(sample, item)`` run in the sandbox, never in the service.

The grader's source is a Python program run by :mod:`rewardhub.sandbox` directly (the same pool,
threads and bound on waiting runs as ``POST /v1/sandbox/run``), so the same kernel isolation, time
and memory limits apply as to any untrusted code. ``grade`` is called as a function-call test: its
return value comes back on the sandbox's private record channel, not on stdout, so a grader that
prints something that looks like a score changes nothing. A grader that raises, returns something
that is not a finite number, runs out of time or memory, or does not parse is a non-``ok`` result
with the sandbox's words for it, not a 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rewardhub.sandbox.inside.wire import decode_value
from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.service import run_program
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.types import ERROR, TIMEOUT, Result

__all__ = ["GRADE_FUNCTION", "run_python_grader"]

GRADE_FUNCTION = "grade"
RUNTIME_ERROR = "python_grader_runtime_error"
SERVER_ERROR = "python_grader_server_error"


async def run_python_grader(
    source: str, sample: Mapping[str, Any], item: Mapping[str, Any], timeout_s: float, backend: str | None = None
) -> Result:
    """Run ``grade(sample, item)`` in the sandbox and read its score."""
    run = await run_program(
        "python",
        source,
        limits=Limits(timeout_s=timeout_s),
        backend=backend,
        test={"mode": "call", "fn_name": GRADE_FUNCTION, "args": [dict(sample), dict(item)]},
    )
    return _verdict(run, timeout_s)


def _verdict(run: RunResult, timeout_s: float) -> Result:
    """The grader's score, or why there is none."""
    seen = {"sandbox_status": run.verdict, "stdout": _tail(run.stdout)}
    if run.verdict == "timeout":
        return Result.failed(f"python grader timed out after {timeout_s:g}s", status=TIMEOUT, **seen)
    if run.verdict == "sandbox_error":  # the sandbox failed, not the grader
        message = run.details.get("message") or _tail(run.stderr)
        return Result.failed(f"the sandbox failed: {message}", error_kind=SERVER_ERROR, **seen)
    record = run.record or {}
    if run.verdict != "ok":
        why = record.get("compile_error") or record.get("error") or _tail(run.stderr) or run.verdict
        return Result.failed(
            f"python grader failed in the sandbox ({run.verdict}): {why}",
            status=ERROR,
            error_kind=RUNTIME_ERROR,
            **seen,
        )
    if "error" in record:
        return Result.failed(f"python grader failed: {record['error']}", error_kind=RUNTIME_ERROR, **seen)
    if "value" not in record:
        problem = run.details.get("record_problem") or "grade() was never called (did the program exit first?)"
        return Result.failed(f"python grader returned no score: {problem}", error_kind=RUNTIME_ERROR, **seen)
    try:
        value = decode_value(record["value"])
    except (ValueError, TypeError) as exc:
        return Result.failed(f"python grader's result is malformed: {exc}", error_kind=RUNTIME_ERROR, **seen)
    return _score(value, seen)


def _score(value: Any, seen: dict[str, Any]) -> Result:
    try:
        score = float(value)
    except (TypeError, ValueError, OverflowError):
        return Result.failed(f"grade() returned {type(value).__name__}, not a number", error_kind=RUNTIME_ERROR, **seen)
    if not math.isfinite(score):
        return Result.failed(f"grade() returned {score}, which is not finite", error_kind=RUNTIME_ERROR, **seen)
    return Result.ok(score, stdout=seen["stdout"])


def _tail(text: str, limit: int = 2000) -> str:
    return text[-limit:].strip()
