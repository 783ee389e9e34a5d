"""From what the parent saw of a run to a verdict a user can act on.

``ok``            the program ran and exited 0 (whether its output is *right* is the caller's question)
``timeout``       the wall clock ran out, or the CPU limit did
``memory``        the kernel killed it for memory, it failed to allocate (MemoryError, bad_alloc),
                  or it ran out of time with its peak resident memory at the limit
``output_limit``  it wrote more than the cap to stdout and stderr
``runtime_error`` it crashed, was killed by a signal, or exited non-zero
``compile_error`` the compiler (or Python's parser) rejected it
``sandbox_error`` the sandbox failed, not the program: no judgement, mask it

A run's verdict is :func:`judge`'s; a test that ran in a batch gets the same verdict from what the
coordinator inside reported of it (:func:`judge_batched`). The order of the checks is the order of
causes: a run we killed for time or output is that, and not the SIGKILL it died of.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardhub.sandbox.limits import Limits
from rewardhub.sandbox.streams import Pumped

__all__ = ["VERDICTS", "RunResult", "Verdict", "judge", "judge_batched", "sandbox_failure"]

Verdict = Literal["ok", "timeout", "memory", "output_limit", "runtime_error", "compile_error", "sandbox_error"]
VERDICTS: tuple[Verdict, ...] = (
    "ok",
    "timeout",
    "memory",
    "output_limit",
    "runtime_error",
    "compile_error",
    "sandbox_error",
)

_ALLOCATION_FAILURES = (
    "MemoryError",  # Python
    "std::bad_alloc",  # C++
    "JavaScript heap out of memory",  # node (V8's heap, sized from the run's memory)
    "Cannot allocate memory",  # ENOMEM from the C library
    "java.lang.OutOfMemoryError",  # the JVM (its heap is sized from the run's memory)
    "fatal error: runtime: out of memory",  # Go
    "memory allocation of",  # Rust's "memory allocation of N bytes failed"
)


@dataclass(frozen=True)
class RunResult:
    verdict: Verdict
    exit_code: int | None
    """The exit status, or None when the program was killed by a signal (see ``details["signal"]``)."""
    stdout: str
    stderr: str
    elapsed_ms: float
    record: dict[str, Any] | None = None
    """The one result record a Python test wrote on its private channel (values, never verdicts)."""
    details: dict[str, Any] = field(default_factory=dict)
    lines: tuple[bytes, ...] = ()
    """A paced run's result channel, a line per test as written (:mod:`rewardhub.sandbox.batch`
    reads them): such a run has no one ``record``."""

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"


def sandbox_failure(message: str, **details: Any) -> RunResult:
    return RunResult("sandbox_error", None, "", "", 0.0, details={"message": message, **details})


def judge(
    seen: Pumped,
    limits: Limits,
    oom_kills: tuple[int | None, int | None],
    details: dict[str, Any],
    paced: bool = False,
) -> RunResult:
    """The verdict of one run, and what the caller gets to see of it (``paced``: its record lines,
    unread: see :class:`RunResult`)."""
    stdout = _text(seen.streams.get("stdout", b""), limits.max_output_bytes)
    stderr = _text(seen.streams.get("stderr", b""), limits.max_output_bytes)
    raw = bytes(seen.streams.get("record", b""))
    lines = tuple(raw.split(b"\n")[:-1]) if paced else ()  # whole lines only: a torn last one is no record
    record, record_problem = (None, None) if paced else _one_record(raw)
    exited = seen.exited or {}
    status = exited.get("status")
    details = {**details, "cpu_s": exited.get("cpu_s"), "max_rss_kb": exited.get("maxrss_kb")}
    if record_problem:
        details["record_problem"] = record_problem
    exit_code, signal_name = _decode_status(status)
    if signal_name:
        details["signal"] = signal_name
    elapsed_ms = seen.elapsed_s * 1000.0

    def result(verdict: Verdict) -> RunResult:
        return RunResult(verdict, exit_code, stdout, stderr, elapsed_ms, record, details, lines)

    if seen.output_limited:
        return result("output_limit")
    if seen.timed_out:
        return result("memory" if _was_at_memory_limit(exited, limits) else "timeout")
    if seen.server_lost or seen.exited is None or status is None:
        message = exited.get("error") or "the sandbox stopped answering during the run"
        return RunResult(
            "sandbox_error", None, stdout, stderr, elapsed_ms, None, {**details, "message": message}, lines
        )
    before, after = oom_kills
    if before is not None and after is not None and after > before:
        return result("memory")
    if record and "compile_error" in record:
        return result("compile_error")
    if signal_name in ("SIGXCPU",) or (signal_name == "SIGKILL" and (exited.get("cpu_s") or 0) >= limits.cpu_s):
        return result("timeout")
    if exit_code != 0 and any(marker in stderr[-4000:] for marker in _ALLOCATION_FAILURES):
        return result("memory")
    if exit_code != 0:
        return result("runtime_error")
    return result("ok")


def judge_batched(entry: Any, run: RunResult) -> RunResult:
    """The verdict of one test of a batch, from what the coordinator inside the run reported of it
    (:mod:`rewardhub.sandbox.inside.batch`): the :class:`RunResult` a run of that test alone would
    have given. ``run`` is the batch's own run (the memory cgroup's kill is seen there)."""
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
    exit_code, signal_name = _decode_status(entry.get("status"))
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


MEMORY_AT_TIMEOUT = 0.9
"""A run that times out with its peak resident memory at this share of ``memory_mb`` or more ran
out of memory, not time: at a memory cgroup's limit the kernel reclaims what it can before it
kills, the program's own code pages included (node's, the JVM's), and a program can stall there
for seconds. The program's own peak, not the cgroup's: the page cache of a compile charged to
the cgroup keeps it at its limit without the program using anything."""


def _was_at_memory_limit(exited: dict[str, Any], limits: Limits) -> bool:
    peak_kb = exited.get("maxrss_kb")
    return bool(peak_kb) and peak_kb >= MEMORY_AT_TIMEOUT * limits.memory_mb * 1024


def _decode_status(status: Any) -> tuple[int | None, str | None]:
    """(exit code, None) or (None, the signal's name); (None, None) for no status (or not a number)."""
    if not isinstance(status, int):
        return None, None
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return None, signal.Signals(number).name
        except ValueError:
            return None, f"signal {number}"
    return os.waitstatus_to_exitcode(status), None


def _one_record(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Exactly one JSON object, or a reason why not (which fails the test)."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        return None, None
    if len(lines) > 1:
        return None, f"{len(lines)} result records for one test (the program wrote on the result channel)"
    try:
        record = json.loads(lines[0])
    except ValueError:
        return None, "the result record is not JSON"
    if not isinstance(record, dict):
        return None, "the result record is not an object"
    return record, None


def _text(data: bytes | bytearray, cap: int) -> str:
    return bytes(data[:cap]).decode("utf-8", errors="replace")
