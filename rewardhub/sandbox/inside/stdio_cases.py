"""The cases of a stdin/stdout suite one after another in one test process, each seeing what
``python main.py < case`` would see.

Why: a test process of its own per case costs a fork, an exit and a wait of an interpreter that
holds the standard library (and numpy): 1.5 to 3 ms each on a small virtual machine, where the
program itself (read a number, print its double) takes a tenth of that. A suite of 100 cases
then costs twenty times one case. Here a case costs what its program costs, plus the reset below.

How each case starts as a fresh interpreter would:

- its standard input is a pipe of its own, which the coordinator feeds exactly as it feeds a test
  process of its own (the read end arrives over the series' socket, fd 4, and goes onto fd 0);
  ``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` are new text streams made as the interpreter
  makes them (its encodings, errors, buffering; ``newline="\\n"``), so nothing buffered by one
  case reaches the next;
- a new ``__main__`` module, ``sys.argv`` and ``sys.path`` as they were, the built-ins as the
  server had them, fresh random state (``random``'s and numpy's);
- what the program may have changed in the process is put back: the working directory, the
  umask, the environment, the recursion and integer-digit limits, trace and profile hooks,
  ``sys``'s hooks, the garbage collector's settings, signal handlers, the signal mask and timers.

What it cannot put back ends the process after the case, and the coordinator starts a fresh
test process for the next one (:data:`RETIRE`): a thread still running, a child process still
there (this process is the subreaper of whatever its cases start, so an orphan counts too), a
lowered resource limit, fds 1-4 replaced, ``faulthandler`` left on, memory or open files that
the case left behind (after a collection). A case that ends the process itself (``os._exit``, a
signal), runs out of time or output, or forges its record, ends it too, as in a series of asserts.

What is not a fresh interpreter, said plainly: modules a case imported stay imported (as in a
warm interpreter: a later case's ``import`` is faster), and a program that deliberately hides
state in a module it imports can carry it to its next case, spending one case's time on the next.
Its answers are still its own, and the expected outputs never enter the sandbox. A reference
that needs a process per case gets it with the code verifier's ``fresh_process_per_case``.

Standard library only.
"""

from __future__ import annotations

import _signal
import builtins
import ctypes
import faulthandler
import gc
import io
import os
import resource
import signal
import socket
import sys
import threading
import types
from _thread import _count as _thread_count
from collections.abc import Callable
from typing import Any

try:
    from . import pristine
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["RETIRE", "SOCKET_FD", "run_cases"]

SOCKET_FD = 4
"""Where a stdin/stdout series' test process receives each case's standard input (a pipe's read end)."""
RETIRE = "retire"
"""The record key that tells the coordinator this process must not run another case."""
GROWTH_LIMIT = 64 << 20
"""Memory a case may leave behind (after a collection) before its process is retired."""
FD_GROWTH_LIMIT = 16
"""Descriptors a case may leave open (after a collection) before its process is retired."""
_STREAMS = (("stdin", 0, "rb"), ("stdout", 1, "wb"), ("stderr", 2, "wb"))
_RLIMITS = tuple(
    getattr(resource, name)
    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_STACK")
    if hasattr(resource, name)
)
_TIMERS = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)
_SYS_HOOKS = ("excepthook", "displayhook", "unraisablehook", "breakpointhook")
_PR_SET_CHILD_SUBREAPER = 36
_dup2 = os.dup2
_close = os.close


def run_cases(
    cases: list[int],
    run_main: Callable[[types.ModuleType], int],
    finish: Callable[[int], int],
    report: Callable[[int, dict[str, Any]], bool],
    path: str,
    builtins_snapshot: dict[str, Any],
    numpy_reseed: Callable[[], None],
) -> int:
    """Run the program once per case in ``cases`` (their indexes), each as above; the last status.

    ``run_main(module)`` executes the program as ``module`` and gives its exit status;
    ``finish(status)`` does what the interpreter does on its way out (atexit, flushing) after the
    threads are joined. Each case is reported as ``{"exit": status}``, with :data:`RETIRE` when
    this process must end after it.
    """
    _become_subreaper()
    listener = socket.socket(fileno=SOCKET_FD)
    baseline = _Baseline(builtins_snapshot)
    status = 0
    for index in cases:
        if not _take_stdin(listener):
            return 1  # never for a case the coordinator sent: this status is the unsent case's failure
        baseline.fresh_streams()
        module = types.ModuleType("__main__")
        module.__file__ = path
        module.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = module
        _reseed(numpy_reseed)
        status = run_main(module)
        _join_threads()
        status = finish(status)
        sys.modules.pop("__main__", None)  # the case's objects can go before its memory is weighed
        module = None  # type: ignore[assignment]
        reasons = baseline.restore()
        record: dict[str, Any] = {"exit": status}
        if reasons:
            record[RETIRE] = reasons
        if not report(index, record) or reasons:
            break  # no record could be written (the program closed fd 3): the exit status says the rest
    return status


def _take_stdin(listener: socket.socket) -> bool:
    """The next case's standard input onto fd 0; False if none comes."""
    try:
        _, fds, _, _ = socket.recv_fds(listener, 1, 1)
    except OSError:
        return False
    if not fds:
        return False
    if fds[0] != 0:  # it is 0 when the last case closed fd 0 (``open(0)`` collected): the lowest free
        _dup2(fds[0], 0)
        _close(fds[0])
    else:
        os.set_inheritable(0, True)
    return True


def _reseed(numpy_reseed: Callable[[], None]) -> None:
    """Fresh random state, as a new interpreter has: ``random``'s from 256 bits of the system's
    (``seed()`` with no argument reads ten times as many), numpy's global generator's as every
    forked child gets it."""
    module = sys.modules.get("random")
    try:
        if module is not None:
            module.seed(int.from_bytes(os.urandom(32), "little"))
        numpy_reseed()
    except BaseException:  # the program replaced seed: its own state, its own concern
        pass


def _join_threads() -> None:
    """Wait for the case's non-daemon threads, as the interpreter does before atexit."""
    main = threading.main_thread()
    for thread in list(threading.enumerate()):
        if thread is not main and not thread.daemon:
            try:
                thread.join()
            except BaseException as exc:  # a thread subclass with a broken join
                pristine.display(exc)


def _become_subreaper() -> None:
    """Orphans of this process's cases become its children, so a case that leaves one is seen."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _Baseline:
    """The process as the first case found it, and how to put it back after each case."""

    def __init__(self, builtins_snapshot: dict[str, Any]) -> None:
        self.builtins = builtins_snapshot
        self.argv = list(sys.argv)
        self.orig_argv = list(getattr(sys, "orig_argv", []))
        self.path = list(sys.path)
        self.streams = {name: _stream_settings(getattr(sys, name)) for name, _, _ in _STREAMS}
        self.cwd = os.getcwd()
        self.umask = os.umask(0)
        os.umask(self.umask)
        self.environ = dict(os.environ._data)  # type: ignore[attr-defined]  # bytes: no decoding to compare
        self.recursion = sys.getrecursionlimit()
        self.digits = sys.get_int_max_str_digits()
        self.switch = sys.getswitchinterval()
        self.hooks = {name: getattr(sys, name) for name in _SYS_HOOKS}
        self.gc = (gc.isenabled(), gc.get_threshold())
        self.handlers = {number: _signal.getsignal(number) for number in signal.valid_signals()}
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.rlimits = {limit: resource.getrlimit(limit) for limit in _RLIMITS}
        self.fds = {fd: _identity(fd) for fd in (1, 2, 3, SOCKET_FD)}
        self.open_fds = _open_fd_count()
        self.memory = _resident()

    def fresh_streams(self) -> None:
        for name, fd, mode in _STREAMS:
            stream = _stream(fd, mode, "<" + name + ">", self.streams[name])
            setattr(sys, name, stream)
            setattr(sys, "__" + name + "__", stream)

    def restore(self) -> list[str]:
        """Put back what can be put back; why this process cannot run another case (none: it can)."""
        reasons = self._unrestorable()
        builtins_now = vars(builtins)
        try:
            changed = builtins_now != self.builtins  # by identity first: a value planted there may compare
        except BaseException:
            changed = True
        if changed:
            builtins_now.clear()
            builtins_now.update(self.builtins)
        sys.argv = list(self.argv)
        sys.orig_argv = list(self.orig_argv)
        sys.path[:] = self.path
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        os.umask(self.umask)
        if os.environ._data != self.environ:  # type: ignore[attr-defined]
            os.environ.clear()
            os.environ.update({os.fsdecode(name): os.fsdecode(value) for name, value in self.environ.items()})
        sys.setrecursionlimit(self.recursion)
        sys.set_int_max_str_digits(self.digits)
        sys.setswitchinterval(self.switch)
        sys.settrace(None)
        sys.setprofile(None)
        threading.settrace(None)  # type: ignore[arg-type]
        threading.setprofile(None)  # type: ignore[arg-type]
        for name, hook in self.hooks.items():
            setattr(sys, name, hook)
        (gc.enable if self.gc[0] else gc.disable)()
        gc.set_threshold(*self.gc[1])
        for timer in _TIMERS:
            signal.setitimer(timer, 0)
        for number, handler in self.handlers.items():  # _signal's: signal's own wrappers convert to enums
            if handler is not None and _signal.getsignal(number) is not handler:
                _signal.signal(number, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        return reasons

    def _unrestorable(self) -> list[str]:
        reasons = []
        if threading.active_count() > 1 or _thread_count() > 0:
            reasons.append("a thread is still running")
        if _has_children():
            reasons.append("a child process is still there")
        if any(resource.getrlimit(limit) != value for limit, value in self.rlimits.items()):
            reasons.append("a resource limit was changed")
        if any(_identity(fd) != identity for fd, identity in self.fds.items()):
            reasons.append("a standard descriptor was replaced")
        if faulthandler.is_enabled():
            reasons.append("faulthandler was enabled")
        if _identity(self.open_fds + FD_GROWTH_LIMIT) is not None or _resident() > self.memory + GROWTH_LIMIT:
            # (descriptors are handed out lowest first: a high one open means many are)
            gc.collect()  # the case's cycles (its module's functions and their globals) first
            if _open_fd_count() > self.open_fds + FD_GROWTH_LIMIT:
                reasons.append("descriptors were left open")
            if _resident() > self.memory + GROWTH_LIMIT:
                reasons.append("memory was left in use")
        return reasons


def _stream_settings(stream: Any) -> dict[str, Any]:
    """How the interpreter made one of its standard streams (what a new one copies)."""
    return {
        "encoding": getattr(stream, "encoding", None) or "utf-8",
        "errors": getattr(stream, "errors", None) or "strict",
        "line_buffering": bool(getattr(stream, "line_buffering", False)),
        "write_through": bool(getattr(stream, "write_through", False)),
    }


def _stream(fd: int, mode: str, name: str, settings: dict[str, Any]) -> io.TextIOWrapper:
    """A standard stream as CPython's ``create_stdio`` makes one: buffered, ``newline="\\n"``."""
    buffer = open(fd, mode, closefd=False)  # noqa: SIM115 - the stream lives as long as its case
    buffer.raw.name = name  # type: ignore[union-attr]
    return io.TextIOWrapper(buffer, newline="\n", **settings)  # type: ignore[arg-type]


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _has_children() -> bool:
    """Any child, running or exited and not waited for (reaping one here changes nothing: the
    process is retired either way)."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def _open_fd_count() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def _resident() -> int:
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0
