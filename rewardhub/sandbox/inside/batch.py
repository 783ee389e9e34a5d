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
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

try:
    from . import pristine
    from .stdio_cases import RETIRE, SOCKET_FD
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]
    from stdio_cases import RETIRE, SOCKET_FD  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["run_batch", "run_native_batch"]

PR_SET_DUMPABLE = 4
RECORD_FD = 3
STDERR_CAP = 8 << 10
"""Most of a test's stderr kept in its entry (its end is what says why it failed)."""
_POLL_S = 0.005
"""How often the coordinator looks for a test process's exit where it has no pidfd to wait on."""
Command = tuple[str, list[str], dict[str, str]]
"""A native program: its path, its argv and its environment."""


def run_batch(
    spec: dict[str, Any],
    run_one: Callable[[dict[str, Any]], int],
    run_series: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int],
    record: Callable[[dict[str, Any]], None],
    prepare: Callable[[], None] = lambda: None,
) -> int:
    """Run ``spec["tests"]`` in order, forked off this process; the exit status.

    Tests of one family in a row share one test process (:func:`_family`): ``run_series`` runs the
    program once and then each assert or call test, or the program once per stdin/stdout case
    (:mod:`stdio_cases`), reporting each test as it ends; a test that hangs, crashes its process or
    runs over its output is stopped alone, and a fresh test process goes on with the next. Whole
    checks, and stdin/stdout cases with ``stdio_series`` false, get a test process each (``run_one``).

    ``spec``: ``timeout_s`` (each test's wall clock), ``budget_s`` (no test starts after it, none
    runs past it), ``stop`` (stop after the first test that surely failed: timed out, crashed or
    left no record), ``max_output`` (a test's stdout and stderr together).

    ``prepare`` runs in each single test's process before anything of the program (fresh random
    state): in a process forked ahead, while the test before it runs, so it costs no test its time.
    """
    families = _lone_cases_alone([_family(test, bool(spec.get("stdio_series", True))) for test in spec["tests"]])

    def start(test: dict[str, Any], held: bool) -> _Process:
        stdio = test.get("kind") == "stdio"
        stdin = _as_bytes(test.get("stdin", b""))
        return _Process(lambda: run_one(test), stdin, held=held, keep_stdout=stdio, prepare=prepare)

    return _run_tests(spec, families, start, run_series, record, fork_ahead=True)


def run_native_batch(spec: dict[str, Any], command: Command, record: Callable[[dict[str, Any]], None]) -> int:
    """Run a native program once per stdin/stdout case of ``spec["tests"]``, each spawned on pipes of
    its own with its own clock (as :func:`run_batch` runs a Python program's single tests); the exit
    status. A spawn costs the program's own exec, so nothing is started ahead."""

    def start(test: dict[str, Any], held: bool) -> _Process:
        return _Process(None, _as_bytes(test.get("stdin", b"")), keep_stdout=True, command=command)

    return _run_tests(spec, [None] * len(spec["tests"]), start, None, record, fork_ahead=False)


def _run_tests(
    spec: dict[str, Any],
    families: list[str | None],
    start: Callable[[dict[str, Any], bool], _Process],
    run_series: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int] | None,
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
    ahead: _Process | None = None  # the next single test's process, forked while this one runs
    try:
        while len(entries) < len(tests) and time.monotonic() < end:
            index = len(entries)
            if families[index] is not None:
                stop = index
                while stop < len(tests) and families[stop] == families[index]:
                    stop += 1
                assert run_series is not None
                done = _run_series(list(enumerate(tests))[index:stop], run_series, limits, bool(spec.get("stop")))
            else:
                process, ahead = ahead or start(tests[index], False), None
                if not process.go():  # it died waiting (the program killed it): a fresh one
                    process.close()
                    process = start(tests[index], False)
                if fork_ahead and index + 1 < len(tests) and families[index + 1] is None:
                    ahead = start(tests[index + 1], True)
                done = [_run_single(process, tests[index], limits)]
            entries += done
            if spec.get("stop") and any(_surely_failed(entry) for entry in done):
                break
    finally:
        if ahead is not None:
            ahead.close()
    record({"batch": entries})
    return 0


SERIES = ("assert", "call")
"""Tests that run in the program's process after its body: several share one test process."""


def _family(test: dict[str, Any], stdio_series: bool) -> str | None:
    """Which tests may share a test process with this one: ``program`` (asserts and calls after one
    run of the program), ``stdio`` (cases, the program run once for each), or None (its own)."""
    kind = test.get("kind")
    if kind in SERIES:
        return "program"
    if kind == "stdio" and stdio_series:
        return "stdio"
    return None


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


def _surely_failed(entry: dict[str, Any]) -> bool:
    """A test the parent cannot pass whatever the expected values are (wrong answers it finds itself)."""
    if entry.get("killed") or entry.get("status") != 0:
        return True
    return bool(entry.get("series")) and (entry.get("record") is None or "error" in entry["record"])


def _run_single(process: _Process, test: dict[str, Any], clock: _Clock) -> dict[str, Any]:
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


def _run_series(
    tests: list[tuple[int, dict[str, Any]]],
    run_series: Callable[[list[tuple[int, dict[str, Any]]], Callable[[int, dict[str, Any]], None]], int],
    clock: _Clock,
    stop: bool,
) -> list[dict[str, Any]]:
    """Entries for ``tests`` run in as few test processes as their failures allow."""
    entries: list[dict[str, Any]] = []
    cases = tests[0][1].get("kind") == "stdio"
    while len(entries) < len(tests) and time.monotonic() < clock.end:
        rest = tests[len(entries) :]
        process = _Process(lambda rest=rest: run_series(rest, _report), keep_stdout=cases, cases=cases)
        try:
            for index, test in rest:
                if cases:
                    process.give_stdin(_as_bytes(test.get("stdin", b"")))
                started = time.monotonic()
                why = process.wait(clock.deadline(), clock.max_output, want_line=True)
                entry: dict[str, Any] = {
                    "elapsed_ms": _ms_since(started),
                    "index": index,
                    "case" if cases else "series": True,
                }
                if why == "line":
                    line = process.take_line()
                    record = _series_record(line, index)
                    _spoil_earlier(entries, line)
                    entry.update(_case_entry(record, process) if cases else {"status": 0, **record})
                    entry["stderr"] = process.stderr_tail()
                    process.mark()
                    entries.append(entry)
                    trusted = entry["status" if cases else "record"] is not None  # a case's record is its status
                    if trusted and not entry.get("retired") and not (stop and _surely_failed(entry)):
                        continue
                    break  # a forged or broken record, or a process that must end: a fresh one goes on
                status = process.close()
                entry["status"] = None if why in _KILLED else status
                if why in _KILLED:
                    entry["killed"] = why
                entry.update(record=None, stderr=process.stderr_tail())
                if cases:
                    entry["stdout"] = process.take_stdout()
                entries.append(entry)
                break
        finally:
            process.close()
        if entries and stop and _surely_failed(entries[-1]):
            break
    return entries


_KILLED = ("timeout", "output_limit")


def _report(index: int, record: dict[str, Any]) -> bool:
    """In a series' test process: one test's record, as one line on the result channel; False if
    it could not be written."""
    data = json.dumps({"i": index, "r": record}, separators=(",", ":")).encode() + b"\n"
    try:
        while data:
            data = data[pristine.write(RECORD_FD, data) :]
    except OSError:  # the program closed or replaced fd 3: no record, so the test fails
        return False
    return True


FORGED = "result records out of place (the program wrote on the result channel)"


def _case_entry(record: dict[str, Any], process: _Process) -> dict[str, Any]:
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


def _series_record(line: bytes, index: int) -> dict[str, Any]:
    """Test ``index``'s record from its line: exactly ``{"i": index, "r": {...}}``."""
    try:
        message = json.loads(line)
    except ValueError:
        return {"record": None, "record_problem": f"the result record is not JSON: {FORGED}"}
    if not isinstance(message, dict) or message.get("i") != index or not isinstance(message.get("r"), dict):
        return {"record": None, "record_problem": FORGED}
    return {"record": message["r"]}


def _spoil_earlier(entries: list[dict[str, Any]], line: bytes) -> None:
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


class _Process:
    """A forked test process on pipes of its own: stdin, stdout, stderr, and the result channel on fd 3."""

    def __init__(
        self,
        body: Callable[[], int] | None,
        stdin: bytes = b"",
        held: bool = False,
        keep_stdout: bool = False,
        prepare: Callable[[], None] | None = None,
        cases: bool = False,
        command: Command | None = None,
    ) -> None:
        """Fork it; with ``held`` it waits for :meth:`go` before it runs anything of the program
        (``prepare`` runs before that wait). Its stdout is kept only with ``keep_stdout`` (a
        stdin/stdout test's answer), else only counted. With ``cases`` it runs stdin/stdout cases
        one after another, and each case's standard input reaches it on :data:`SOCKET_FD`
        (:meth:`give_stdin`). With ``command`` (a native program) nothing is forked: the program is
        spawned on its pipes (:func:`_spawn`), and ``body`` is None."""
        held_r, self.held_w = os.pipe() if held else (None, None)
        pipes = [os.pipe() for _ in range(4)]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]]
        theirs = {0: pipes[0][0], 1: pipes[1][1], 2: pipes[2][1], RECORD_FD: pipes[3][1]}
        self.cases: socket.socket | None = None
        if cases:
            self.cases, theirs_socket = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            ours.append(self.cases.fileno())
            theirs[SOCKET_FD] = theirs_socket.detach()
        pid = _spawn(command, theirs) if command is not None else _fork(body, ours, theirs, held_r, prepare)  # type: ignore[arg-type]
        for fd in theirs.values():
            os.close(fd)
        if held_r is not None:
            os.close(held_r)
        if self.cases is not None:
            self.cases.setblocking(False)
        try:
            os.setpgid(pid, pid)  # the child does it too: whichever comes first, no race with its forks
        except OSError:
            pass
        self.pid = pid
        self.stdin_fd: int | None = ours[0]
        self.pending = memoryview(stdin)
        os.set_blocking(ours[0], False)
        if not self.pending:
            self._close_stdin()
        self.out_r, self.err_r, self.record_r = ours[1:4]
        self.stdout, self.stderr, self.record = bytearray(), bytearray(), bytearray()
        self.streams = {self.out_r: self.stdout, self.err_r: self.stderr, self.record_r: self.record}
        self.keep_stdout = keep_stdout
        self.stdout_seen = 0
        self.stderr_seen = 0
        """Bytes of stdout and stderr so far, kept or not (stderr: only its last STDERR_CAP)."""
        self.open_reads = set(self.streams)
        self.output_mark = 0
        self.exited = False
        self.status: int | None = None
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def wait(self, deadline: float, cap: int, want_line: bool) -> str:
        """Until a whole result line is there (``want_line``), it exits, or it runs out of time or output."""
        while True:
            if want_line and b"\n" in self.record:
                return "line"
            if self.exited:
                return "exited"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            waits = list(self.open_reads) + ([self.pidfd] if self.pidfd is not None else [])
            writes = [self.stdin_fd] if self.stdin_fd is not None else []
            readable, writable, _ = select.select(waits, writes, [], min(left, _POLL_S) if self.pidfd is None else left)
            if writable:
                self._feed()
            for fd in readable:
                if fd in self.open_reads:
                    self._read(fd)
            if self.stdout_seen + self.stderr_seen - self.output_mark > cap:
                return "output_limit"
            if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:  # exited, not reaped
                for fd in list(self.open_reads):  # what it wrote before it exited; a leftover's pipe is not waited for
                    os.set_blocking(fd, False)
                    while fd in self.open_reads and self._read(fd):
                        pass
                self.exited = True

    def go(self) -> bool:
        """Let a held process run its test; False if it is gone."""
        if self.held_w is None:
            return True
        try:
            os.write(self.held_w, b"g")
        except OSError:
            return False
        finally:
            os.close(self.held_w)
            self.held_w = None
        return True

    def _read(self, fd: int) -> bool:
        before = len(self.stdout), len(self.stderr)
        got = _read_into(fd, self.streams, self.open_reads)
        if fd == self.out_r:
            self.stdout_seen += len(self.stdout) - before[0]
            if not self.keep_stdout:
                del self.stdout[:]
        elif fd == self.err_r:
            self.stderr_seen += len(self.stderr) - before[1]
            if len(self.stderr) > 2 * STDERR_CAP:
                del self.stderr[:-STDERR_CAP]
        return got

    def give_stdin(self, data: bytes) -> None:
        """The next case's standard input: a fresh pipe, its read end sent to the process, its write
        end fed from :meth:`wait` as a test process of its own is fed."""
        assert self.cases is not None
        self._close_stdin()
        read, write = os.pipe()
        try:
            socket.send_fds(self.cases, [b"c"], [read])
        except OSError:  # gone, or the program stopped reading its socket: the wait will tell
            os.close(write)
            return
        finally:
            os.close(read)
        os.set_blocking(write, False)
        self.stdin_fd, self.pending = write, memoryview(data)
        if not self.pending:
            self._close_stdin()

    def drain(self) -> None:
        """Read what is already in the stdout and stderr pipes."""
        for fd in (self.out_r, self.err_r):
            if fd in self.open_reads:
                os.set_blocking(fd, False)
                while fd in self.open_reads and self._read(fd):
                    pass

    def take_stdout(self) -> str:
        """The stdout kept so far, gone from here."""
        text = bytes(self.stdout).decode("utf-8", errors="replace")
        del self.stdout[:]
        return text

    def take_line(self) -> bytes:
        line, _, rest = bytes(self.record).partition(b"\n")
        self.record[:] = rest
        return line

    def mark(self) -> None:
        """The next test's output and stderr start here."""
        self.output_mark = self.stdout_seen + self.stderr_seen
        del self.stderr[:]

    def stderr_tail(self) -> str:
        return bytes(self.stderr[-STDERR_CAP:]).decode("utf-8", errors="replace")

    def close(self) -> int | None:
        """Kill its group (the zombie keeps the group's id ours until it is reaped), reap it; its wait
        status. Reaped even after its last test: a process still dying when the run ends would make
        the server's reset kill it from outside and start its spare children again."""
        if self.pid is None:
            return self.status
        if self.held_w is not None:
            os.close(self.held_w)
            self.held_w = None
        _kill_group(self.pid)
        _, self.status = os.waitpid(self.pid, 0)
        self.pid = None  # type: ignore[assignment]
        self._close_stdin()
        for fd in (self.out_r, self.err_r, self.record_r, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self.cases is not None:
            self.cases.close()
        return self.status

    def _feed(self) -> None:
        if self.stdin_fd is None:
            return
        try:
            self.pending = self.pending[os.write(self.stdin_fd, self.pending[: 1 << 16]) :]
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin: what is left is not read, as for a run
            self.pending = self.pending[:0]
        if not self.pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.stdin_fd is not None:
            os.close(self.stdin_fd)
            self.stdin_fd = None


def _fork(
    body: Callable[[], int],
    ours: list[int],
    theirs: dict[int, int],
    held_r: int | None,
    prepare: Callable[[], None] | None,
) -> int:
    """A test process forked off this one, on ``theirs``; it runs ``body`` (once let go, if held)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.setpgid(0, 0)
            _become_test(ours, theirs, keep=held_r)  # at once: no other test's pipe stays open here
            if prepare is not None:
                prepare()
            if held_r is None or os.read(held_r, 1):  # an end of file: its coordinator let it go
                if held_r is not None:
                    pristine.close(held_r)
                status = body()
            else:
                status = 0
        except BaseException as exc:  # a failure of the harness itself, not the program's
            _say(f"sandbox harness error: {type(exc).__name__}\n")
        finally:
            pristine.exit_now(status)
    return pid


def _spawn(command: Command, theirs: dict[int, int]) -> int:
    """A native program started on its pipes without a fork of this interpreter (``posix_spawn``:
    the kernel copies no page table, so a case costs its own exec, not this process's size), in a
    process group of its own, with the signal dispositions a shell gives it. Only fds 0-2 reach it:
    every other descriptor here is close-on-exec (the run's child left 0-2 alone inheritable)."""
    path, argv, env = command
    actions = [(os.POSIX_SPAWN_DUP2, theirs[fd], fd) for fd in (0, 1, 2)]
    try:
        return os.posix_spawn(path, argv, env, file_actions=actions, setpgroup=0, setsigdef=_SHELL_DEFAULTS)
    except OSError as exc:  # no such program, not executable: what a shell says, and its status
        why = exc.strerror or str(exc)
        return _fork(lambda: _cannot_execute(argv[0], why), [], theirs, None, None)


_SHELL_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ)
"""Ignored by Python, default for a program a shell starts (as the server's own native runs get them)."""


def _cannot_execute(name: str, why: str) -> int:
    _say(f"cannot execute {name}: {why}\n")
    return 127


def _become_test(ours: list[int], theirs: dict[int, int], keep: int | None = None) -> None:
    """Only this test's own pipes, on the descriptors a run's program has them on (the coordinator's
    own descriptors are all above them: 0-3 were taken when its pipes were made), and ``keep``."""
    for fd in ours:
        os.close(fd)
    for target, fd in theirs.items():  # the sources are all above 3; one may be 4, copied before 4 is
        if fd == target:
            os.set_inheritable(fd, target < RECORD_FD)
        else:
            os.dup2(fd, target, inheritable=target < RECORD_FD)
    first = max(theirs) + 1
    top = max(first + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    if keep is None:
        os.closerange(first, top)
    else:
        os.closerange(first, keep)
        os.closerange(keep + 1, top)


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
