"""The parent's half of a batch: every test of one Python submission in one sandboxed run.

:mod:`rewardhub.sandbox.inside.batch` forks one test process per test inside the run and reports,
for each, what happened (its wait status, whether it was killed for time or output, its record, its
stderr, its stdout for stdin/stdout tests). Here each report becomes the :class:`RunResult` that a
run of that test alone would have given, so the ``code`` verifier judges both the same way: its
comparisons, with the expected values, never leave this process.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from rewardhub.sandbox.jobs import Job
from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.verdicts import _ALLOCATION_FAILURES, RunResult, Verdict

__all__ = ["BATCH_SLACK_S", "run_batch"]

BATCH_SLACK_S = 2.0
"""The run's own clock is the batch's budget plus this: the coordinator inside stops every test
by the budget, so the parent's clock only fires if the coordinator itself is stuck or killed."""


def run_batch(
    job: Job,
    tests: list[dict[str, Any]],
    limits: Limits,
    budget_s: float,
    stop: bool = False,
    last: bool = False,
    stdio_series: bool = True,
) -> list[RunResult | None]:
    """Each test's result, in order; None for a test that did not start (out of budget, or after a
    sure failure with ``stop``). ``limits.timeout_s`` is each test's own clock.

    stdin/stdout cases in a row run one after another in one test process, each as a fresh
    interpreter would run it (:mod:`rewardhub.sandbox.inside.stdio_cases`); ``stdio_series`` false
    gives each a test process of its own (a fork per case).

    A test is ``{"kind": "stdio", "stdin"}``, ``{"kind": "call", "fn_name", "args"}``,
    ``{"kind": "assert", "setup", "leaves"}`` or ``{"kind": "check", "source", "names"}``.
    If the run itself fails (the program does not compile, the sandbox breaks), every test gets that run.
    """
    budget_s = max(0.0, budget_s)
    run_limits = limits.with_(timeout_s=budget_s + BATCH_SLACK_S)
    spec = {
        "mode": "batch",
        "tests": tests,
        "timeout_s": limits.timeout_s,
        "budget_s": budget_s,
        "stop": stop,
        "stdio_series": stdio_series,
        "max_output": limits.max_output_bytes,
    }
    run = job.run(b"", run_limits, spec, last=last)
    entries = (run.record or {}).get("batch")
    if not isinstance(entries, list) or len(entries) > len(tests):
        return [run] * len(tests)
    results: list[RunResult | None] = [_result(entry, run, limits) for entry in entries]
    return results + [None] * (len(tests) - len(results))


def _result(entry: Any, run: RunResult, limits: Limits) -> RunResult:
    if not isinstance(entry, dict):
        return RunResult("sandbox_error", None, "", "", 0.0, None, {"message": "a malformed batch entry"})
    stderr = str(entry.get("stderr", ""))
    stdout = str(entry.get("stdout", ""))
    elapsed_ms = float(entry.get("elapsed_ms") or 0.0)
    record = entry.get("record") if isinstance(entry.get("record"), dict) else None
    details: dict[str, Any] = {"batched": True}
    if entry.get("record_problem"):
        details["record_problem"] = str(entry["record_problem"])
    if entry.get("retired"):  # the case left its process unfit for another: the next one got a fresh one
        details["process_retired"] = entry["retired"]
    status = entry.get("status")
    exit_code, signal_name = _decoded(status)
    if signal_name:
        details["signal"] = signal_name

    def result(verdict: Verdict) -> RunResult:
        return RunResult(verdict, exit_code, stdout, stderr, elapsed_ms, record, details)

    killed = entry.get("killed")
    if killed == "timeout":
        return result("timeout")
    if killed == "output_limit":
        return result("output_limit")
    if signal_name == "SIGXCPU":
        return result("timeout")
    if signal_name == "SIGKILL":  # not ours (ours is 'killed'): the memory cgroup's, if the run saw one
        return result("memory" if run.verdict == "memory" else "runtime_error")
    if exit_code != 0 and any(marker in stderr[-4000:] for marker in _ALLOCATION_FAILURES):
        return result("memory")
    if exit_code != 0:
        return result("runtime_error")
    return result("ok")


def _decoded(status: Any) -> tuple[int | None, str | None]:
    if not isinstance(status, int):
        return None, None
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return None, signal.Signals(number).name
        except ValueError:
            return None, f"signal {number}"
    return os.waitstatus_to_exitcode(status), None
