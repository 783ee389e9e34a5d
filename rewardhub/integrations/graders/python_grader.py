"""The ``python`` grader: the user's ``grade(sample, item)`` run in the sandbox, never in the service.

The grader's source becomes a program that reads ``{"sample", "item"}`` as JSON on stdin, calls
``grade`` and prints the float it returns on a marked last line (the grader may print whatever it
likes before). The program goes to the sandbox through ``POST /v1/sandbox/run`` (API.md), so the
same kernel isolation, time and memory limits apply as to any untrusted code. A grader that raises,
prints no result, returns something that is not a finite number or overruns its time is a
non-``ok`` result with the sandbox's words for it, not a 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rewardhub.types import ERROR, TIMEOUT, Result

__all__ = ["MARKER", "SandboxRun", "grader_program", "run_python_grader"]

MARKER = "__rewardhub_grade__="
SandboxRun = Callable[[dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Runs one ``/v1/sandbox/run`` body and answers its JSON."""

_HARNESS = f"""

def __rewardhub_main():
    import json as _json, math as _math, sys as _sys
    _payload = _json.loads(_sys.stdin.read())
    _value = float(grade(_payload["sample"], _payload["item"]))
    if not _math.isfinite(_value):
        raise ValueError("grade() returned a value that is not finite: %r" % _value)
    _sys.stdout.write("\\n{MARKER}" + _json.dumps(_value) + "\\n")


__rewardhub_main()
"""


def grader_program(source: str) -> str:
    return source.rstrip() + "\n" + _HARNESS


async def run_python_grader(
    source: str, sample: Mapping[str, Any], item: Mapping[str, Any], sandbox: SandboxRun, timeout_s: float
) -> Result:
    """Run ``grade(sample, item)`` in the sandbox and read its score."""
    answer = await sandbox(
        {
            "language": "python",
            "code": grader_program(source),
            "stdin": json.dumps({"sample": dict(sample), "item": dict(item)}),
            "timeout_s": timeout_s,
        }
    )
    status, stdout, stderr = answer.get("status"), str(answer.get("stdout", "")), str(answer.get("stderr", ""))
    if status == "timeout":
        return Result.failed(f"python grader timed out after {timeout_s:g}s", status=TIMEOUT, sandbox_status=status)
    if status == "sandbox_error":  # the sandbox failed, not the grader
        message = answer.get("message") or _tail(stderr)
        return Result.failed(
            f"the sandbox failed: {message}", sandbox_status=status, error_kind="python_grader_server_error"
        )
    if status != "ok":
        return Result.failed(
            f"python grader failed in the sandbox ({status}): {_tail(stderr)}",
            status=ERROR,
            sandbox_status=status,
            error_kind="python_grader_runtime_error",
        )
    lines = [line for line in stdout.splitlines() if line.startswith(MARKER)]
    if not lines:
        return Result.failed(
            "python grader printed no result (did grade() return?)", error_kind="python_grader_runtime_error"
        )
    try:
        value = float(json.loads(lines[-1][len(MARKER) :]))
    except (ValueError, TypeError):
        return Result.failed("python grader's result line is not a number", error_kind="python_grader_runtime_error")
    if not math.isfinite(value):
        return Result.failed(f"python grader returned {value}", error_kind="python_grader_runtime_error")
    return Result.ok(value, stdout=_tail(stdout.split(MARKER)[0]))


def _tail(text: str, limit: int = 2000) -> str:
    return text[-limit:].strip()
