"""Every test of one submission in one sandboxed run, each with its own clock.

A run per test pays the whole round trip (the parent's pipes, the server's fork, its cleanup) once
per assert: eight for a HumanEval problem with eight asserts, a hundred for a stdin/stdout suite of a
hundred cases. Here the run's child becomes a **coordinator** that executes none of the program and:

- marks itself non-dumpable (a process of the same uid can then read neither its memory nor its
  descriptors: ``/proc/PID/mem``, ``/proc/PID/fd``), and alone holds the run's result channel;
- starts the **test processes** (:mod:`piped_process`), each in its own process group on pipes of
  its own (its result record on fd 3): one per single test, which runs the program and that test
  exactly as a run of its own would (:func:`harness._run_test`); one per series of stdin/stdout
  cases, run one after another (:mod:`stdio_cases`); for a built native program, one spawned per case;
- gives each test its own time budget: past it the test process's group is killed and the next
  test starts, so a hanging test costs the others nothing;
- reads each test's record and checks it is exactly one JSON object (a program that writes on its
  own channel can spoil only its own test, never forge a neighbour's), and writes one record for
  the whole run, after the last test: ``{"batch": [entry, ...]}``, one entry per test that ran.

Each entry says what happened, never whether the test passed: the expected values are not in the
sandbox, so the trusted parent compares, as it does for one test per run. A whole check never
comes here: every test process is a fork of this one, which holds every test of the batch, so a
whole check is a run of its own (:mod:`check_process`).

A submission whose tests are all asserts and calls needs no coordinator: its one test process is the
run's child itself, and the trusted parent reads its lines (:func:`report`) and keeps each test's
clock (:mod:`rewardhub.sandbox.batch`), by the rules kept here (:func:`series_record`,
:func:`spoil_earlier`, :func:`surely_failed`): one fork per submission instead of two.

Standard library only.
"""

from __future__ import annotations

import ctypes
import json
import time
from collections.abc import Callable
from typing import Any

try:
    from . import pristine
    from .piped_process import RECORD_FD, Command, PipedProcess
    from .stdio_cases import RETIRE
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]
    from piped_process import RECORD_FD, Command, PipedProcess  # type: ignore[no-redef]
    from stdio_cases import RETIRE  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["report", "run_batch", "run_native_batch", "series_record", "spoil_earlier", "surely_failed"]

PR_SET_DUMPABLE = 4


def run_batch(
    spec: dict[str, Any],
    run_one: Callable[[dict[str, Any]], int],
    run_cases: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int],
    record: Callable[[dict[str, Any]], None],
    prepare: Callable[[], None] = lambda: None,
) -> int:
    """Run ``spec["tests"]`` in order, forked off this process; the exit status.

    stdin/stdout cases in a row share one test process: ``run_cases`` runs the program once per
    case (:mod:`stdio_cases`), reporting each case as it ends; a case that hangs, crashes its process
    or runs over its output is stopped alone, and a fresh test process goes on with the next. Every
    other test, and each case with ``stdio_series`` false, gets a test process of its own (``run_one``).

    ``spec``: ``timeout_s`` (each test's wall clock), ``budget_s`` (no test starts after it, none
    runs past it), ``stop`` (stop after the first test that surely failed: timed out, crashed or
    left no record), ``max_output`` (a test's stdout and stderr together).

    ``prepare`` runs in each single test's process before anything of the program (fresh random
    state): in a process forked ahead, while the test before it runs, so it costs no test its time.
    """
    families = _lone_cases_alone([_family(test, bool(spec.get("stdio_series", True))) for test in spec["tests"]])

    def start(test: dict[str, Any], held: bool) -> PipedProcess:
        stdio = test.get("kind") == "stdio"
        stdin = _as_bytes(test.get("stdin", b""))
        return PipedProcess(lambda: run_one(test), stdin, held=held, keep_stdout=stdio, prepare=prepare)

    return _run_tests(spec, families, start, run_cases, record, fork_ahead=True)


def run_native_batch(spec: dict[str, Any], command: Command, record: Callable[[dict[str, Any]], None]) -> int:
    """Run a native program once per stdin/stdout case of ``spec["tests"]``, each spawned on pipes of
    its own with its own clock (as :func:`run_batch` runs a Python program's single tests); the exit
    status. A spawn costs the program's own exec, so nothing is started ahead."""

    def start(test: dict[str, Any], held: bool) -> PipedProcess:
        return PipedProcess(None, _as_bytes(test.get("stdin", b"")), keep_stdout=True, command=command)

    return _run_tests(spec, [None] * len(spec["tests"]), start, None, record, fork_ahead=False)


def _run_tests(
    spec: dict[str, Any],
    families: list[str | None],
    start: Callable[[dict[str, Any], bool], PipedProcess],
    run_cases: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int] | None,
    record: Callable[[dict[str, Any]], None],
    fork_ahead: bool,
) -> int:
    """The tests in order: a family in a row in one series, each other test in a process ``start``
    makes (the next one forked ahead, held, with ``fork_ahead``); one record for the whole run."""
    _undumpable()
    end = time.monotonic() + float(spec.get("budget_s", 1e9))
    limits = _Clock(end, float(spec["timeout_s"]), int(spec.get("max_output", 1 << 20)))
    tests: list[dict[str, Any]] = list(spec["tests"])
    entries: list[dict[str, Any]] = []
    ahead: PipedProcess | None = None  # the next single test's process, forked while this one runs
    try:
        while len(entries) < len(tests) and time.monotonic() < end:
            index = len(entries)
            if families[index] is not None:
                stop = index
                while stop < len(tests) and families[stop] == families[index]:
                    stop += 1
                assert run_cases is not None
                done = _run_cases(list(enumerate(tests))[index:stop], run_cases, limits, bool(spec.get("stop")))
            else:
                process, ahead = ahead or start(tests[index], False), None
                if not process.go():  # it died waiting (the program killed it): a fresh one
                    process.close()
                    process = start(tests[index], False)
                if fork_ahead and index + 1 < len(tests) and families[index + 1] is None:
                    ahead = start(tests[index + 1], True)
                done = [_run_single(process, tests[index], limits)]
            entries += done
            if spec.get("stop") and any(surely_failed(entry) for entry in done):
                break
    finally:
        if ahead is not None:
            ahead.close()
    record({"batch": entries})
    return 0


def _family(test: dict[str, Any], stdio_series: bool) -> str | None:
    """Which tests may share a test process with this one: ``stdio`` (cases, the program run once
    for each), or None (its own)."""
    return "stdio" if test.get("kind") == "stdio" and stdio_series else None


def _lone_cases_alone(families: list[str | None]) -> list[str | None]:
    """A stdin/stdout case with no case beside it runs as a single test: a series of one costs its
    setup and a process that is not needed after (about 2 ms here), where a second case already
    saves a fork."""
    lone = [
        family == "stdio" and (i == 0 or families[i - 1] != "stdio") and families[i + 1 : i + 2] != ["stdio"]
        for i, family in enumerate(families)
    ]
    return [None if alone else family for family, alone in zip(families, lone, strict=True)]


class _Clock:
    def __init__(self, end: float, timeout_s: float, max_output: int) -> None:
        self.end = end
        self.timeout_s = timeout_s
        self.max_output = max_output

    def deadline(self) -> float:
        return min(time.monotonic() + self.timeout_s, self.end)


def surely_failed(entry: dict[str, Any]) -> bool:
    """A test the parent cannot pass whatever the expected values are (wrong answers it finds itself)."""
    if entry.get("killed") or entry.get("status") != 0:
        return True
    return bool(entry.get("series")) and (entry.get("record") is None or "error" in entry["record"])


def _run_single(process: PipedProcess, test: dict[str, Any], clock: _Clock) -> dict[str, Any]:
    """One test in a test process of its own (started: its clock runs from now)."""
    started = time.monotonic()
    why = process.wait(clock.deadline(), clock.max_output, want_line=False)
    status = process.close()
    entry: dict[str, Any] = {"elapsed_ms": _ms_since(started), "status": None if why in _KILLED else status}
    if why in _KILLED:
        entry["killed"] = why
    entry.update(_one_record(bytes(process.record)))
    if test.get("kind") == "stdio":
        entry["stdout"] = bytes(process.stdout).decode("utf-8", errors="replace")
    entry["stderr"] = process.stderr_tail()
    return entry


def _run_cases(
    tests: list[tuple[int, dict[str, Any]]],
    run_cases: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int],
    clock: _Clock,
    stop: bool,
) -> list[dict[str, Any]]:
    """Entries for the stdin/stdout cases ``tests``, run in as few test processes as their failures allow."""
    entries: list[dict[str, Any]] = []
    while len(entries) < len(tests) and time.monotonic() < clock.end:
        rest = tests[len(entries) :]
        process = PipedProcess(lambda rest=rest: run_cases(rest, report), keep_stdout=True, cases=True)
        try:
            for index, test in rest:
                process.give_stdin(_as_bytes(test.get("stdin", b"")))
                started = time.monotonic()
                why = process.wait(clock.deadline(), clock.max_output, want_line=True)
                entry: dict[str, Any] = {"elapsed_ms": _ms_since(started), "index": index, "case": True}
                if why == "line":
                    line = process.take_line()
                    record = series_record(line, index)
                    spoil_earlier(entries, line)
                    entry.update(_case_entry(record, process))
                    entry["stderr"] = process.stderr_tail()
                    process.mark()
                    entries.append(entry)
                    trusted = entry["status"] is not None  # a case's record is its exit status
                    if trusted and not entry.get("retired") and not (stop and surely_failed(entry)):
                        continue
                    break  # a forged or broken record, or a process that must end: a fresh one goes on
                status = process.close()
                entry["status"] = None if why in _KILLED else status
                if why in _KILLED:
                    entry["killed"] = why
                entry.update(record=None, stderr=process.stderr_tail(), stdout=process.take_stdout())
                entries.append(entry)
                break
        finally:
            process.close()
        if entries and stop and surely_failed(entries[-1]):
            break
    return entries


_KILLED = ("timeout", "output_limit")


def report(index: int, record: dict[str, Any], ms: float | None = None) -> bool:
    """In a series' test process: one test's record (and the time it took, as the process saw it),
    as one line on the result channel; False if it could not be written."""
    line = {"i": index, "r": record} if ms is None else {"i": index, "r": record, "ms": round(ms, 3)}
    data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
    try:
        while data:
            data = data[pristine.write(RECORD_FD, data) :]
    except OSError:  # the program closed or replaced fd 3: no record, so the test fails
        return False
    return True


FORGED = "result records out of place (the program wrote on the result channel)"


def _case_entry(record: dict[str, Any], process: PipedProcess) -> dict[str, Any]:
    """A stdin/stdout case's entry from its line: its exit status as a wait status, as a test
    process of its own would give, and the stdout it wrote before the line (all of it: the line is
    written after the case's streams were flushed and its threads joined)."""
    process.drain()
    entry: dict[str, Any] = {"record": None, "stdout": process.take_stdout()}
    said = record.get("record")
    exit_status = said.get("exit") if isinstance(said, dict) else None
    if not isinstance(exit_status, int) or isinstance(exit_status, bool):
        entry.update(status=None, record_problem=record.get("record_problem") or FORGED)
        return entry
    entry["status"] = (exit_status & 0xFF) << 8
    if said.get(RETIRE):
        entry["retired"] = [str(reason) for reason in said[RETIRE]][:8] if isinstance(said[RETIRE], list) else True
    return entry


def series_record(line: bytes, index: int) -> dict[str, Any]:
    """Test ``index``'s record from its line: exactly ``{"i": index, "r": {...}}``, and the
    ``elapsed_ms`` its process measured when the line says (``"ms"``: shown, never judged)."""
    try:
        message = json.loads(line)
    except ValueError:
        return {"record": None, "record_problem": f"the result record is not JSON: {FORGED}"}
    if not isinstance(message, dict) or message.get("i") != index or not isinstance(message.get("r"), dict):
        return {"record": None, "record_problem": FORGED}
    ms = message.get("ms")
    if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
        return {"record": message["r"], "elapsed_ms": float(ms)}
    return {"record": message["r"]}


def spoil_earlier(entries: list[dict[str, Any]], line: bytes) -> None:
    """A second record for a test already recorded: someone else wrote one of the two, so it fails."""
    try:
        index = json.loads(line).get("i")
    except (ValueError, AttributeError):
        return
    for position, entry in enumerate(entries):
        if entry.get("index") == index:
            spoiled = {**entry, "record": None, "record_problem": FORGED}
            if entry.get("case"):  # a case's answer is its stdout: without a trusted end, no status
                spoiled["status"] = None
            entries[position] = spoiled


def _ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000.0, 3)


def _one_record(data: bytes) -> dict[str, Any]:
    """The test's one record, or why there is none: only its own test is spoiled by a forged one."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        return {"record": None}
    if len(lines) > 1:
        return {"record": None, "record_problem": f"{len(lines)} result records for one test"}
    try:
        record = json.loads(lines[0])
    except ValueError:
        return {"record": None, "record_problem": "the result record is not JSON"}
    if not isinstance(record, dict):
        return {"record": None, "record_problem": "the result record is not an object"}
    return {"record": record}


def _undumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _as_bytes(data: Any) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)
