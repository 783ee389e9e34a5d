"""A whole test run in a process the program's code never runs in (HumanEval's ``check``, EvalPlus).

Asserts inside loops or helper functions cannot be split one by one, so the test runs as written.
Run in the program's own process, anything the test relies on could be rewritten by the program
first: ``check`` or the built-ins replaced, ``sys.exit(0)`` or ``os._exit(0)`` before the asserts,
a trace function that jumps over them, a value whose ``__eq__`` always says yes, a forged "done"
written where the harness would write it. So there are two processes:

- the **test process** (this one, the fork server's child) marks itself non-dumpable, which keeps
  a process of the same uid from reading its memory or its file descriptors (``/proc/PID/mem``,
  ``/proc/PID/fd``, ``/proc/PID/environ``, ``pidfd_getfd``; ptrace is refused by the system-call
  filter too; the kernel already makes a process that changed its uid non-dumpable, and this covers
  the backends that change none), and never executes a line of the program. It runs the test with pristine built-ins;
  every name the test needs from the program (the entry point, helpers like ``encode_cyclic``) is a
  stub that calls across a socket. It alone holds the result channel (fd 3), and it writes its one
  record, "the check returned", only after ``check(...)`` has returned.
- the **program process**, forked before any of the program runs *and before the test is read*,
  closes the result channel and the test's pipe, runs the program as ``__main__``, then answers
  calls: arguments and results travel strictly encoded (:mod:`wire`), so the test only ever
  compares plain values it built itself.

Why the test comes after the fork: a fork copies every page of its parent, freed ones included,
so a test that was ever in this process before the fork (its source, a table of expected outputs,
even a string since dropped) could be read back by the program: walking its own stack
(``sys._getframe``) up to the harness's frames, scanning ``gc.get_objects()``, or reading
``/proc/self/mem``. So the run's payload carries the program and the names the test needs, never
the test; the test's source arrives on this run's stdin (:class:`rewardhub.sandbox.jobs.Job` puts
it there), which this process reads only once the program process exists, and which the program
process never holds (its stdin is an empty pipe). Of the alternatives, keeping the test in the
trusted parent outside the sandbox would cost a round trip per call across the sandbox's wall, and
spawning a fresh interpreter for the program would cost its start and its imports, where a fork of
the warm one costs about a millisecond.

If the program exits, crashes or stops answering, the test's call fails, so the test fails. The
worst a program can do to the test process is kill it, which leaves no record: a failure.

What it does not cover: a test that passes the program something that is not plain data (a
function, an object of its own) gets a TypeError, and a test that checks how the program changed
an argument in place sees its own copy unchanged; both fail the test rather than pass it.

Standard library only.
"""

from __future__ import annotations

import builtins
import ctypes
import importlib
import os
import socket
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

try:
    from . import pristine, wire
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]
    import wire  # type: ignore[no-redef]

pristine.seal(globals())  # the program process goes on with these functions after the program ran

__all__ = ["Program", "run_whole_check"]

PR_SET_DUMPABLE = 4
TEST_FD = 0
"""Where the test's source arrives: the run's stdin, read only after the program process is forked."""
_EXCEPTIONS = {
    name: value for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, Exception)
}


class ProgramGone(Exception):
    """The program process exited or stopped answering while the test needed it."""


@dataclass(frozen=True)
class Program:
    """How the harness runs the program, and what the interpreter does on its way out."""

    module: types.ModuleType
    run: Callable[[], tuple[int, bool]]
    """Execute the module body: (exit status, whether it called sys.exit)."""
    finish: Callable[[int], int]
    exit_status: Callable[[object], int]


def run_whole_check(
    spec: dict[str, Any],
    program: Program,
    builtins_snapshot: dict[str, Any],
    record: Callable[[dict[str, Any]], None],
    record_fd: int,
) -> int:
    """Fork the program off, then read the test from stdin and run it here; the exit status (the
    program's, if it failed)."""
    _undumpable()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            ours.close()
            os.close(record_fd)  # the program never holds the result channel
            _empty_stdin()  # nor the test's pipe, which the test process reads only now
            status = _serve_program(theirs, program, list(spec["names"]))
        except SystemExit as exc:  # sys.exit() inside a function the test called
            status = program.exit_status(exc.code)
        finally:
            pristine.exit_now(program.finish(status))
    theirs.close()
    _forget_scratch(os.path.dirname(spec["path"]))
    source = _read_test(TEST_FD)
    if source is None:
        record({"check": "failed", "message": "the test did not arrive"})
    else:
        record(_run_test(ours, source, builtins_snapshot))
    ours.close()  # the program process sees the end of its calls and finishes like a program does
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code > 0 else (1 if code < 0 else 0)


def _empty_stdin() -> None:
    """An empty pipe on fd 0 in place of the test's: the program reads an end of file, as it would
    from the empty stdin of a run of its own."""
    read, write = os.pipe()
    pristine.close(write)
    os.dup2(read, TEST_FD)
    pristine.close(read)


def _read_test(fd: int) -> str | None:
    """The test's source, all of it (the parent closes the pipe after writing it); None if none came."""
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        source = b"".join(chunks).decode("utf-8", "surrogatepass")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        pristine.close(fd)
    return source if source.strip() else None


# --- the test process -------------------------------------------------------------------------


def _undumpable() -> None:
    """Same-uid processes may then neither read this one's memory nor open its file descriptors."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _forget_scratch(folder: str) -> None:
    """The program can write ``random.py`` into the scratch folder: the test imports only the system's."""
    sys.path[:] = [p for p in sys.path if p not in ("", ".", folder)]
    importlib.invalidate_caches()


def _run_test(sock: socket.socket, source: str, builtins_snapshot: dict[str, Any]) -> dict[str, Any]:
    try:
        ready, _ = wire.recv_message(sock)
    except (EOFError, OSError, ValueError):
        return {"check": "failed", "message": "the program exited before its test ran"}
    if ready.get("op") != "ready" or not isinstance(ready.get("names"), dict):
        return {"check": "failed", "message": ready.get("error") or "the program exited before its test ran"}
    namespace: dict[str, Any] = {"__name__": "__test__", "__builtins__": dict(builtins_snapshot)}
    for name, kind in ready["names"].items():
        _bind(namespace, sock, str(name), kind)
    try:
        exec(compile(source, "<test>", "exec", optimize=0), namespace)
    except ProgramGone as exc:
        return {"check": "failed", "message": str(exc)}
    except BaseException as exc:  # the test failed: its assert, or an error it ran into
        frames = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<test>"]
        pristine.display(exc)
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        where = f" at line {frames[-1]} of the test" if frames else ""
        return {"check": "failed", "message": f"{text[:2000]}{where}"}
    return {"check": "passed"}


def _bind(namespace: dict[str, Any], sock: socket.socket, name: str, kind: Any) -> None:
    if kind == "callable":
        namespace[name] = _remote(sock, name)
    elif isinstance(kind, dict) and "value" in kind:
        try:
            namespace[name] = wire.decode_value(kind["value"])
        except (ValueError, TypeError, KeyError):
            pass
    elif isinstance(kind, dict) and isinstance(kind.get("module"), str):
        try:
            namespace[name] = importlib.import_module(kind["module"])
        except ImportError:
            pass


def _remote(sock: socket.socket, name: str) -> Callable[..., Any]:
    """A stand-in for the program's function ``name``: calls it in the program process."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            message = {"op": "call", "name": name, "args": wire.encode_value(list(args))}
            message["kwargs"] = wire.encode_value(dict(kwargs))
        except (wire.NotPlain, ValueError) as exc:
            raise TypeError(f"cannot pass {exc} to the program's {name}()") from None
        try:
            wire.send_message(sock, message)
            answer, _ = wire.recv_message(sock)
        except (EOFError, OSError, ValueError):
            raise ProgramGone(f"the program exited during its test (in {name}())") from None
        if "value" in answer:
            return wire.decode_value(answer["value"])
        if "raised" in answer:  # the program's exception, as a built-in type the test can expect
            raise _EXCEPTIONS.get(str(answer["raised"]), RuntimeError)(str(answer.get("message", ""))[:2000])
        raise TypeError(str(answer.get("error", "malformed answer"))[:2000])

    call.__name__ = call.__qualname__ = name
    return call


# --- the program process ------------------------------------------------------------------------


def _serve_program(sock: socket.socket, program: Program, names: list[str]) -> int:
    status, exited = program.run()
    if exited or status != 0:
        why = "exited" if exited else "raised an exception"
        _send(sock, {"op": "exited", "error": f"the program {why} before its test ran"})
        return status
    module = program.module
    described = {name: _describe(module.__dict__[name]) for name in names if name in module.__dict__}
    _send(sock, {"op": "ready", "names": described})
    while True:
        try:
            message, fds = wire.recv_message(sock)
        except (EOFError, OSError, ValueError):
            return 0
        for fd in fds:
            pristine.close(fd)
        _send(sock, _answer(module, message))


def _describe(value: Any) -> Any:
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    if callable(value):
        return "callable"
    try:
        return {"value": wire.encode_value(value)}
    except (wire.NotPlain, ValueError, RecursionError):
        return "unsupported"


def _answer(module: types.ModuleType, message: dict[str, Any]) -> dict[str, Any]:
    function = module.__dict__.get(str(message.get("name")))
    if not callable(function):
        return {"error": f"the program defines no function {message.get('name')!r}"}
    try:
        args = wire.decode_value(message["args"])
        kwargs = wire.decode_value(message.get("kwargs", {"dict": []}))
    except (KeyError, ValueError, TypeError) as exc:
        return {"error": f"malformed call: {exc}"}
    try:
        value = function(*args, **kwargs)
    except SystemExit:
        raise  # the program asked to exit: it does, and the test sees it gone
    except BaseException as exc:  # the program's own error: the test decides what it means
        pristine.display(exc)
        try:
            message = str(exc)[:2000]
        except BaseException:  # an exception whose __str__ fails
            message = ""
        return {"raised": type(exc).__name__, "message": message}
    try:
        return {"value": wire.encode_value(value)}
    except (wire.NotPlain, ValueError, RecursionError) as exc:
        return {"error": f"{message.get('name')}() returned what cannot be compared: {exc}"}


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        wire.send_message(sock, message)
    except OSError:
        pass
