"""Every test of one submission in one sandboxed run: each test in a fork of its own, with its own clock.

A run per test pays the whole round trip (the parent's pipes, the server's fork, its cleanup) once
per assert: eight for a HumanEval problem with eight asserts, a hundred for a stdin/stdout suite of a
hundred cases. Here the run's child becomes a **coordinator** that executes none of the program and:

- marks itself non-dumpable (a process of the same uid can then read neither its memory nor its
  descriptors: ``/proc/PID/mem``, ``/proc/PID/fd``), and alone holds the run's result channel;
- forks one **test process** per test, in its own process group, which runs the program and that one
  test exactly as a run of its own would (:func:`harness._run_test`): its result record goes to a
  pipe of its own, dup-ed onto fd 3, its stdin/stdout/stderr (stdin/stdout tests) to pipes of its own;
- gives each test its own time budget: past it the test process's group is killed and the next
  test starts, so a hanging test costs the others nothing;
- reads each test's record and checks it is exactly one JSON object (a program that writes on its
  own channel can spoil only its own test, never forge a neighbour's), and writes one record for
  the whole run, after the last test: ``{"batch": [entry, ...]}``, one entry per test that ran.

Each entry says what happened, never whether the test passed: the expected values are not in the
sandbox, so the trusted parent compares, as it does for one test per run.

Standard library only.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

try:
    from . import pristine
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["run_batch"]

PR_SET_DUMPABLE = 4
RECORD_FD = 3
STDERR_CAP = 8 << 10
"""Most of a test's stderr kept in its entry (its end is what says why it failed)."""
_POLL_S = 0.005
"""How often the coordinator looks for a test process's exit where it has no pidfd to wait on."""


def run_batch(
    spec: dict[str, Any], run_one: Callable[[dict[str, Any]], int], record: Callable[[dict[str, Any]], None]
) -> int:
    """Run ``spec["tests"]`` one after another, each forked off this process; the exit status.

    ``spec``: ``timeout_s`` (each test's wall clock), ``budget_s`` (no test starts after it, none
    runs past it), ``stop`` (stop after the first test that surely failed: timed out, crashed or
    left no record), ``max_output`` (a test's stdout and stderr together).
    """
    _undumpable()
    started = time.monotonic()
    end = started + float(spec.get("budget_s", 1e9))
    timeout_s = float(spec["timeout_s"])
    max_output = int(spec.get("max_output", 1 << 20))
    entries: list[dict[str, Any]] = []
    for test in spec["tests"]:
        now = time.monotonic()
        if now >= end:
            break
        entry = _run_test(test, run_one, min(now + timeout_s, end), max_output)
        entries.append(entry)
        if spec.get("stop") and _surely_failed(entry, test):
            break
    record({"batch": entries})
    return 0


def _surely_failed(entry: dict[str, Any], test: dict[str, Any]) -> bool:
    """A test the parent cannot pass whatever the expected values are (wrong answers it finds itself)."""
    if entry.get("killed") or entry.get("status") != 0:
        return True
    return test.get("kind") != "stdio" and (entry.get("record") is None or "error" in entry["record"])


def _run_test(
    test: dict[str, Any], run_one: Callable[[dict[str, Any]], int], deadline: float, cap: int
) -> dict[str, Any]:
    """One test in a fork of its own, on pipes of its own (stdin, stdout, stderr, record)."""
    pipes = [os.pipe() for _ in range(4)]
    ours = [pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]]
    theirs = {0: pipes[0][0], 1: pipes[1][1], 2: pipes[2][1], RECORD_FD: pipes[3][1]}
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    clock = time.monotonic()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.setpgid(0, 0)
            _become_test(ours, theirs)
            status = run_one(test)
        except BaseException as exc:  # a failure of the harness itself, not the program's
            _say(f"sandbox harness error: {type(exc).__name__}\n")
        finally:
            pristine.exit_now(status)
    for fd in theirs.values():
        os.close(fd)
    try:
        os.setpgid(pid, pid)  # the child does it too: whichever comes first, no race with its forks
    except OSError:
        pass
    stdin_fd, out_r, err_r, record_r = ours
    streams = {out_r: bytearray(), err_r: bytearray(), record_r: bytearray()}
    try:
        status, killed = _watch(pid, streams, record_r, stdin_fd, _as_bytes(test.get("stdin", b"")), deadline, cap)
    finally:
        for fd in (out_r, err_r, record_r):
            os.close(fd)
    entry: dict[str, Any] = {"elapsed_ms": round((time.monotonic() - clock) * 1000.0, 3), "status": status}
    if killed:
        entry["killed"] = killed
    entry.update(_one_record(bytes(streams[record_r])))
    if test.get("kind") == "stdio":
        entry["stdout"] = bytes(streams[out_r]).decode("utf-8", errors="replace")
    entry["stderr"] = bytes(streams[err_r][-STDERR_CAP:]).decode("utf-8", errors="replace")
    return entry


def _become_test(ours: list[int], theirs: dict[int, int]) -> None:
    """Only this test's own pipes, on the descriptors a run's program has them on (the coordinator's
    own descriptors are all above them: 0-3 were taken when its pipes were made)."""
    for fd in ours:
        os.close(fd)
    for target, fd in theirs.items():
        os.dup2(fd, target, inheritable=target != RECORD_FD)
    os.closerange(RECORD_FD + 1, max(RECORD_FD + 2, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))


def _watch(
    pid: int,
    streams: dict[int, bytearray],
    record_fd: int,
    stdin_fd: int | None,
    stdin: bytes,
    deadline: float,
    cap: int,
) -> tuple[int | None, str | None]:
    """Feed stdin, read the pipes, until the test process exits (then drain) or runs out of time or
    output; kill its group. Its wait status (None if killed by us) and why it was killed."""
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    pending = memoryview(stdin)
    if stdin_fd is not None:
        os.set_blocking(stdin_fd, False)
        if not pending:
            os.close(stdin_fd)
            stdin_fd = None
    open_reads = set(streams)
    killed: str | None = None
    status: int | None = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                killed = "timeout"
                break
            waits = list(open_reads) + ([pidfd] if pidfd is not None else [])
            writes = [stdin_fd] if stdin_fd is not None else []
            readable, writable, _ = select.select(waits, writes, [], min(left, _POLL_S) if pidfd is None else left)
            if writable and stdin_fd is not None:
                try:
                    pending = pending[os.write(stdin_fd, pending[: 1 << 16]) :]
                except BlockingIOError:
                    pass
                except OSError:  # the program closed its stdin: what is left is not read, as for a run
                    pending = pending[:0]
                if not pending:
                    os.close(stdin_fd)
                    stdin_fd = None
            for fd in readable:
                if fd in open_reads:
                    _read_into(fd, streams, open_reads)
            if sum(len(data) for fd, data in streams.items() if fd != record_fd) > cap:
                killed = "output_limit"
                break
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:  # exited, not reaped
                for fd in list(open_reads):  # what it wrote before it exited; a leftover's pipe is not waited for
                    os.set_blocking(fd, False)
                    while fd in open_reads and _read_into(fd, streams, open_reads):
                        pass
                break
    finally:
        _kill_group(pid)  # its leftovers (the zombie keeps the group's id ours until it is reaped)
        _, reaped = os.waitpid(pid, 0)
        status = None if killed else reaped
        if stdin_fd is not None:
            os.close(stdin_fd)
        if pidfd is not None:
            os.close(pidfd)
    return status, killed


def _read_into(fd: int, streams: dict[int, bytearray], open_reads: set[int]) -> bool:
    """Read what is there; False at its end (or when nothing is there now)."""
    try:
        data = os.read(fd, 1 << 16)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno != errno.EAGAIN:
            open_reads.discard(fd)
        return False
    if not data:
        open_reads.discard(fd)
        return False
    streams[fd] += data
    return True


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass


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


def _say(text: str) -> None:
    try:
        pristine.write(2, text.encode(errors="replace"))
    except OSError:
        pass
