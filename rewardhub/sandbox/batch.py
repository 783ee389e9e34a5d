"""The parent's half of a batch: every test of one Python submission in one sandboxed run.

Two shapes, the same outcomes as a run per test (the ``code`` verifier judges them the same way:
its comparisons, with the expected values, never leave this process):

- **A series** (every test an assert or a call, as HumanEval, MBPP and LeetCode-style data have
  them): the run's child runs the program once and then each test, writing one line per test on
  its result channel. This process is the series' coordinator: the run is *paced*
  (:class:`~rewardhub.sandbox.streams.Pace`), so each test has its own clock and output cap from
  the line before it, and the lines are read by the rules of
  :mod:`rewardhub.sandbox.inside.batch` (exactly one line per test, in order; a second one for a
  test spoils it). A test that hangs, crashes the process or writes a forged line ends the run, and
  unless failures stop the batch, a fresh run goes on with the tests after it. One fork per
  submission: a coordinator inside the sandbox would be a second (the test process's parent), and
  its copy of the interpreter's pages cost as much as the test process itself.
- **A whole check** (asserts in loops or helpers) runs as a run of its own, its test sent on the
  run's stdin and read by the test process only after the program's process is forked, so the
  program's memory never held it (:mod:`rewardhub.sandbox.inside.check_process`); the tests
  around it are batched as usual.
- **Anything else** (stdin/stdout cases, a mix with calls or asserts): :mod:`rewardhub.sandbox.inside.batch`
  coordinates inside the run, forks the test processes and reports, for each, what happened (its
  wait status, whether it was killed for time or output, its record, its stderr, its stdout for
  stdin/stdout tests). Each report becomes the :class:`RunResult` that a run of that test alone
  would have given, by the rules every run's verdict follows
  (:func:`rewardhub.sandbox.verdicts.judge_batched`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from rewardhub.sandbox.inside.batch import series_record, spoil_earlier, surely_failed
from rewardhub.sandbox.jobs import Job
from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.verdicts import RunResult, judge_batched

__all__ = ["BATCH_SLACK_S", "BatchRuns", "run_batch"]

BATCH_SLACK_S = 2.0
"""The run's own clock is the batch's budget plus this: the coordinator inside stops every test
by the budget, so the parent's clock only fires if the coordinator itself is stuck or killed."""
SERIES = ("assert", "call")
"""Tests that run in the program's process after its body, one after another (a series)."""


@dataclass(frozen=True)
class BatchRuns:
    """What a submission's tests got in one sandboxed run (:meth:`SandboxPool.run_tests`)."""

    runs: list[RunResult | None]
    """Each test's result, in order (None: it did not start), as :func:`run_batch` returns them;
    every one None when the program did not build."""
    build_failure: RunResult | None
    """The failed build's result, or None: a program that does not build runs no test."""
    sandbox: dict[str, Any]
    """What the sandbox was (its backend and isolation), as a verdict's details report it."""


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
    if any(test.get("kind") == "check" for test in tests):
        return _run_with_whole_tests(job, tests, limits, budget_s, stop, last, stdio_series)
    if job.language.in_process and tests and all(test.get("kind") in SERIES for test in tests):
        return _run_series(job, tests, limits, budget_s, stop, last)
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
    results: list[RunResult | None] = [judge_batched(entry, run) for entry in entries]
    return results + [None] * (len(tests) - len(results))


def _run_with_whole_tests(
    job: Job,
    tests: list[dict[str, Any]],
    limits: Limits,
    budget_s: float,
    stop: bool,
    last: bool,
    stdio_series: bool,
) -> list[RunResult | None]:
    """Each whole test in a run of its own, the tests between them batched as usual, in order.

    A whole test's process reads the test only after it has forked the program's process
    (:mod:`rewardhub.sandbox.inside.check_process`); a coordinator would have held every test of
    the batch before forking the processes the program runs in. A HumanEval problem is one whole
    test or none, so this costs it no extra run.
    """
    end = time.monotonic() + budget_s
    segments = _segments(tests)
    results: list[RunResult | None] = []
    for number, segment in enumerate(segments):
        left = end - time.monotonic()
        if left <= 0 or (stop and any(_stops(result) for result in results)):
            break
        final = last and number == len(segments) - 1
        if segment[0].get("kind") != "check":
            results += run_batch(job, segment, limits, left, stop, final, stdio_series)
            continue
        whole = {"mode": "check", "source": segment[0]["source"], "names": list(segment[0]["names"])}
        results.append(job.run(b"", limits.with_(timeout_s=min(limits.timeout_s, left)), whole, last=final))
    return results + [None] * (len(tests) - len(results))


def _segments(tests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each whole test alone, the other tests between them together."""
    segments: list[list[dict[str, Any]]] = []
    for test in tests:
        if test.get("kind") != "check" and segments and segments[-1][0].get("kind") != "check":
            segments[-1].append(test)
        else:
            segments.append([test])
    return segments


def _stops(result: RunResult | None) -> bool:
    """Whether, with ``stop``, nothing runs after this result (a sure failure, or a failed whole test)."""
    return result is None or not result.ok or (result.record or {}).get("check") == "failed"


def _run_series(
    job: Job, tests: list[dict[str, Any]], limits: Limits, budget_s: float, stop: bool, last: bool
) -> list[RunResult | None]:
    """Asserts and calls after one run of the program, in as few runs as their failures allow."""
    end = time.monotonic() + budget_s
    results: list[RunResult | None] = []
    while len(results) < len(tests) and (left := end - time.monotonic()) > 0:
        rest = list(enumerate(tests))[len(results) :]
        # with stop, no run follows one that ends early: the sandbox can be wiped right after it
        final = last and (stop or len(rest) == 1)
        spec = {"mode": "series", "tests": [[index, test] for index, test in rest]}
        run = job.run(b"", limits.with_(timeout_s=left), spec, last=final, pace_s=limits.timeout_s)
        results += _series_results(rest, run, stop)
        if stop:  # a run ends early only at a sure failure (or a forged line): nothing runs after it
            break
    return results + [None] * (len(tests) - len(results))


def _series_results(rest: list[tuple[int, dict[str, Any]]], run: RunResult, stop: bool) -> list[RunResult]:
    """What each test of one paced run got: its line's record, up to the first line that cannot be
    trusted (forged or broken) or that stops the series (a sure failure, with ``stop``); else, after
    the last line, the test the run ended in, with the run's own verdict (its clock or cap ran out,
    it crashed, it exited)."""
    first = _first_line(run.lines)
    if run.verdict == "sandbox_error" or (isinstance(first, dict) and "compile_error" in first):
        verdict = "compile_error" if run.verdict != "sandbox_error" else "sandbox_error"
        whole = RunResult(verdict, run.exit_code, "", run.stderr, run.elapsed_ms, first, run.details)
        return [whole] * len(rest)
    entries: list[dict[str, Any]] = []
    stopped = False
    for (index, _), line in zip(rest, run.lines, strict=False):
        record = series_record(line, index)
        spoil_earlier(entries, line)
        entries.append({"index": index, "series": True, "status": 0, "elapsed_ms": 0.0, **record})
        if entries[-1]["record"] is None or (stop and surely_failed(entries[-1])):
            stopped = True  # what followed came from a process the series would have ended here
            break
    results = [_line_result(entry) for entry in entries]
    if not stopped and len(entries) < len(rest):
        used = sum(entry["elapsed_ms"] for entry in entries)
        ended = RunResult(
            run.verdict,
            run.exit_code,
            "",
            run.stderr,
            max(0.0, run.elapsed_ms - used),
            None,
            {**run.details, "batched": True},
        )
        results.append(ended)
    return results


def _line_result(entry: dict[str, Any]) -> RunResult:
    details: dict[str, Any] = {"batched": True}
    if entry.get("record_problem"):
        details["record_problem"] = entry["record_problem"]
    return RunResult("ok", 0, "", "", entry["elapsed_ms"], entry["record"], details)


def _first_line(lines: tuple[bytes, ...]) -> Any:
    try:
        return json.loads(lines[0]) if lines else None
    except ValueError:
        return None
