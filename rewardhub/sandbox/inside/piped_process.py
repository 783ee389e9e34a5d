"""A test process on pipes of its own: stdin, stdout, stderr, and the result channel on fd 3.

The batch coordinator (:mod:`batch`) starts one per single test, or per series of stdin/stdout cases, and keeps
each one's clock and output cap through it: forked off the coordinator (a Python test, which runs
the program in a copy of the warm interpreter) or spawned (a built native program, which needs no
copy of the interpreter: ``posix_spawn`` costs its own exec). It reads what the process writes,
feeds its stdin, and kills its process group when its time or output runs out.

Standard library only.
"""

from __future__ import annotations

import errno
import os
import resource
import select
import signal
import socket
import sys
import time
from collections.abc import Callable

try:
    from . import pristine
    from .stdio_cases import SOCKET_FD
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]
    from stdio_cases import SOCKET_FD  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["RECORD_FD", "Command", "PipedProcess"]

RECORD_FD = 3
STDERR_CAP = 8 << 10
"""Most of a test's stderr kept (its end is what says why it failed)."""
_POLL_S = 0.005
"""How often the coordinator looks for a test process's exit where it has no pidfd to wait on."""
Command = tuple[str, list[str], dict[str, str]]
"""A native program: its path, its argv and its environment."""


class PipedProcess:
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


def _say(text: str) -> None:
    try:
        pristine.write(2, text.encode(errors="replace"))
    except OSError:
        pass
