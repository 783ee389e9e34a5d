"""A session's kernel: one long-lived program in a session's sandbox that runs its calls, REPL style.

The parent starts it as a Python run of the fork server (the program's uid, its rlimits, the
sandbox's cgroups and system-call filter, like any submission) and keeps it for the session's life.
Before it serves anything, it forks the session's judge (:mod:`session_judge`, whose source the
parent puts before this file's as ``JUDGE_SOURCE``), hands it the run's request and reply channels
and closes its own copies: the judge reads every request and writes every reply, and the kernel
gets the session's calls from the judge on a socket of their own. The run's pipes are:

- fd 0 brings requests, one JSON object a line: ``{"code": ..., "timeout_s": ...}`` (Python, run in
  one namespace that lives as long as the kernel), ``{"command": ...}`` (a shell command),
  ``{"files": {path: text}}`` (the session's files, written as its own user) or ``{"test": spec,
  "program": ...}`` (one of the ``code`` verifier's tests: the judge runs it, see its module; the
  kernel only forks the program process it asks for, which has the session's variables and
  files, so the variables a test changes go with that fork, and files it writes stay);
- fd 1 and fd 2 are the calls' stdout and stderr, as the program and its children write them;
- fd 3 takes one reply line per request, written after the call's output was flushed:
  ``{"status": ..., "exit_code": ...}`` with the words of the sandbox's verdicts.

A call's stdin is its request's ``"stdin"`` (an unlinked temporary file) or else /dev/null, never
the request channel, so a call's ``input()`` cannot eat the next request. Nothing the kernel says
is trusted beyond the session's own caller: the code it runs shares its process. Rewards never come
from here: a test command (``/test``, ``session_tests``) runs in a fresh program of the fork
server, and the ``code`` verifier's tests run in the judge's test processes, where the session's
code never ran.

A call is interrupted at its time limit by SIGALRM (its state is kept); a call that ignores the alarm
is killed from outside by the parent a moment later, and the kernel with it.

Standard library only: this file runs in the sandbox, where rewardhub is not installed.
"""

import os  # noqa: I001 (already loaded by the fork server, as sys is: neither is looked up on sys.path)
import sys

SESSION_PATH = list(sys.path)
"""``sys.path`` as the session's calls see it: the session's folder first, as a script's would be.
The kernel's and the judge's own imports below are made without it: a module the session planted
there (``subprocess.py``) before the kernel was started afresh would otherwise run here, before the
judge is forked."""
sys.path[:] = [entry for entry in sys.path if entry not in ("", os.path.dirname(os.path.abspath(__file__)))]

import ast  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

REQUESTS = os.dup(0)
REPLIES = os.dup(3)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
os.close(3)

SHELL = "/bin/bash"
# a module the session rewrites and imports again within a second must not come from a stale .pyc
sys.dont_write_bytecode = True
sys.pycache_prefix = "/dev/null/pycache"
os.environ.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX="/dev/null/pycache")


class CellTimeout(BaseException):
    """Raised in the call's code by the alarm: a BaseException, so ``except Exception`` does not eat it."""


def _alarm(signum, frame):
    raise CellTimeout()


def _flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


def _print_exception(exc):
    """Python's own report of an uncaught exception, without this file's frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


_main = types.ModuleType("__main__")
_main.__dict__["__builtins__"] = __builtins__
sys.modules["__main__"] = _main  # functions defined in a call pickle, as a script's would
NAMESPACE = _main.__dict__
"""The session's variables: every Python call of the session runs in it."""

CELL = "<session>"


def run_code(code):
    """Run one cell; its verdict and exit code. A final expression's value is printed, as in a REPL."""
    try:
        tree = ast.parse(code, CELL, "exec")
    except (SyntaxError, ValueError) as exc:
        traceback.print_exception(type(exc), exc, None, limit=0, file=sys.stderr)
        return "compile_error", 1
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        body = compile(tree, CELL, "exec")
        value = compile(last, CELL, "eval") if last is not None else None
    except (SyntaxError, ValueError) as exc:
        traceback.print_exception(type(exc), exc, None, limit=0, file=sys.stderr)
        return "compile_error", 1
    try:
        exec(body, NAMESPACE)
        if value is not None:
            result = eval(value, NAMESPACE)
            if result is not None:
                print(repr(result))
    except CellTimeout:
        print("the call ran out of time (its variables are kept)", file=sys.stderr)
        return "timeout", None
    except SystemExit as exc:
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        return ("ok" if status == 0 else "runtime_error"), status
    except MemoryError as exc:
        _print_exception(exc)
        return "memory", 1
    except BaseException as exc:
        _print_exception(exc)
        return "runtime_error", 1
    return "ok", 0


WRAPPER = 'trap "pwd >&$2" EXIT; eval "$1"'
"""Runs the command in the session's working directory and reports where it ended (``cd`` persists)."""


def run_command(command, timeout_s, stdin=None):
    """Run one shell command in its own process group, in the session's working directory (a ``cd``
    in it moves the session, Python's calls too); the group is killed at its end or time limit."""
    _flush()
    where, told = os.pipe()
    try:
        process = subprocess.Popen(
            [SHELL, "-c", WRAPPER, SHELL, command, str(told)],
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            start_new_session=True,
            pass_fds=(told,),
        )
    except OSError as exc:
        os.close(where)
        os.close(told)
        print(f"cannot start the shell: {exc}", file=sys.stderr)
        return "runtime_error", 127
    os.close(told)
    try:
        status = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        process.wait()
        os.close(where)
        return "timeout", None
    _kill_group(process.pid)  # what it left in the background of its group goes with it
    _follow(where)
    if status < 0:
        return "runtime_error", None
    return ("ok" if status == 0 else "runtime_error"), status


def _follow(fd):
    """Move to the folder the command ended in, if it said one (a killed shell says nothing)."""
    os.set_blocking(fd, False)
    try:
        folder = os.read(fd, 1 << 16).decode(errors="replace").strip()
    except OSError:
        folder = ""
    finally:
        os.close(fd)
    if folder:
        try:
            os.chdir(folder)
        except OSError:
            pass


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def write_files(files):
    """The session's files, owned by the session's user (its calls may change them)."""
    import base64

    for path, content in files.items():
        data = base64.b64decode(content["base64"]) if isinstance(content, dict) else content.encode()
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    return "ok", 0


def stdin_file(text):
    """The call's standard input: an unlinked file holding ``text`` (no pipe to fill, no file left)."""
    handle = tempfile.TemporaryFile()
    handle.write(text.encode())
    handle.seek(0)
    return handle


def with_stdin(text, call, *args):
    """Run ``call(*args)`` with fd 0 and ``sys.stdin`` reading ``text``, then /dev/null again."""
    handle = stdin_file(text)
    os.dup2(handle.fileno(), 0)
    handle.close()
    sys.stdin = open(0, closefd=False)
    try:
        return call(*args)
    finally:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdin = open(0, closefd=False)


# --- the program process of a test, a fork of the session ---------------------------------------
# What it answers carries values, never verdicts: the expected outputs stay with the verifier and
# the judge's test process, which compare. Values are type-tagged as rewardhub.sandbox.inside.wire.encode_value tags them
# (its decode_value reads them strictly in the parent; tests/sandbox/test_sandbox_wire.py pins the two together).

MAX_DEPTH = 64


class NotPlain(TypeError):
    pass


def encode_value(value, depth=0):
    if depth > MAX_DEPTH:
        raise NotPlain(f"value nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -(2**63) <= value < 2**63 else {"int": str(value)}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"float": repr(value)}
    if kind in (list, tuple, set, frozenset):
        return {kind.__name__: [encode_value(item, depth + 1) for item in value]}
    if kind is dict:
        return {"dict": [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        import base64

        return {"bytes": base64.b64encode(value).decode()}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is numpy.ndarray:
        return encode_value(value.tolist(), depth + 1)
    if numpy is not None and isinstance(value, numpy.generic) and type(value).__module__ == "numpy":
        return encode_value(value.item(), depth + 1)
    raise NotPlain(f"cannot compare a value of type {kind.__module__}.{kind.__qualname__}")


def _encoded(value):
    try:
        return {"value": encode_value(value)}
    except (NotPlain, ValueError, RecursionError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}


def _described(exc):
    try:
        return f"{type(exc).__name__}: {exc}"[:2000]
    except BaseException:
        return type(exc).__name__


def serve_test(order, fds):
    """The judge asks for a test's program process: a fork of the kernel (the session's variables
    and files) that runs the response's code, then, unless the test is a stdin/stdout one, answers
    the test's calls on the socket it was given (see :mod:`session_judge`). The fork's pid goes to
    the judge at once, its wait status when it ended."""
    sock_fd, stdin_fd, out_fd, err_fd = fds
    _flush()
    pid = os.fork()
    if pid == 0:  # the program process: never returns
        status = 1
        try:
            os.setpgid(0, 0)
            KERNEL.close()  # the kernel's channel is not the program's
            for fd, target in ((stdin_fd, 0), (out_fd, 1), (err_fd, 2)):
                os.dup2(fd, target)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            status = _program_side(order, socket.socket(fileno=sock_fd))
        except CellTimeout:
            status = 124
        except MemoryError:
            status = 137
        except BaseException as exc:
            _print_exception(exc)
        finally:
            _flush()
            os._exit(status)
    for fd in fds:
        os.close(fd)
    return pid


def _program_side(order, sock):
    kind = order["kind"]
    status = _run_program(order["program"]) if order["program"] else 0
    if kind == "stdio":
        return status
    if status != 0:
        JUDGE.send_line(sock, {"op": "exited", "status": status, "compile_error": status == 3})
        return status
    names = [name for name in order.get("names", []) if _found(name)]  # what the test will look up
    JUDGE.send_line(sock, {"op": "ready", "names": {name: _describe(name) for name in names}})
    lines = JUDGE.Lines(sock)
    while True:
        try:
            message = lines.read()
        except JUDGE.ProgramGone:
            return 0  # the test is over
        JUDGE.send_line(sock, _answer(message))


def _answer(message):
    """One of the test's questions about the session's names: what they are, or a call of one."""
    if message.get("op") == "describe":
        return {"names": {name: _describe(name) for name in message.get("names", []) if _found(name)}}
    function = _lookup(str(message.get("name")))
    if not callable(function):
        return {"error": f"the session defines no function {message.get('name')!r}"}
    try:
        args = JUDGE.decode_value(message["args"])
        kwargs = JUDGE.decode_value(message.get("kwargs", {"dict": []}))
    except (KeyError, ValueError, TypeError) as exc:
        return {"error": f"malformed call: {exc}"}
    try:
        value = function(*args, **kwargs)
    except CellTimeout:
        raise
    except BaseException as exc:  # the session's own error: the test decides what it means
        _print_exception(exc)
        return {"raised": type(exc).__name__, "message": _described(exc).partition(": ")[2]}
    return _encoded(value)


_ABSENT = object()


def _lookup(name):
    """A name of the session (``module.attr`` too); a LeetCode ``Solution``'s method as a fallback."""
    head, *rest = name.split(".")
    value = NAMESPACE.get(head, _ABSENT)
    for attr in rest:
        value = getattr(value, attr, _ABSENT) if value is not _ABSENT else _ABSENT
    if value is _ABSENT and not rest and isinstance(NAMESPACE.get("Solution"), type):
        value = getattr(NAMESPACE["Solution"](), head, _ABSENT)
    return value


def _found(name):
    return isinstance(name, str) and _lookup(name) is not _ABSENT


def _describe(name):
    value = _lookup(name)
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    if callable(value):
        return "callable"
    encoded = _encoded(value)
    return encoded if "value" in encoded else "unsupported"


def _run_program(program):
    """The program as a script would run (no REPL echo), in the session's namespace; its exit status."""
    try:
        code = compile(program, "<program>", "exec")
    except (SyntaxError, ValueError) as exc:
        traceback.print_exception(type(exc), exc, None, limit=0, file=sys.stderr)
        return 3
    try:
        exec(code, NAMESPACE)
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except CellTimeout:
        raise
    except MemoryError as exc:
        _print_exception(exc)
        return 137
    except BaseException as exc:
        _print_exception(exc)
        return 1
    return 0


def serve(kernel):
    """Answer the judge's messages until it closes: the session's calls, and program processes for tests."""
    signal.signal(signal.SIGALRM, _alarm)
    while True:
        got = JUDGE.recv_frame(kernel)
        if got is None:
            return  # the parent closed the session (the judge passes the end on)
        message, fds = got
        seq = message.get("seq")
        if "serve" in message:
            pid = serve_test(message["serve"], fds)
            JUDGE.send_frame(kernel, {"seq": seq, "pid": pid})
            _, waited = os.waitpid(pid, 0)
            _kill_group(pid)  # what the program left running goes with it
            JUDGE.send_frame(kernel, {"seq": seq, "status": waited})
            continue
        for fd in fds:
            os.close(fd)
        status, exit_code = handle(message["request"])
        _flush()
        JUDGE.send_frame(kernel, {"seq": seq, "reply": {"status": status, "exit_code": exit_code}})


def handle(request):
    """One call of the session; its verdict and exit code."""
    timeout_s = float(request.get("timeout_s", 10.0))
    if "files" in request:
        try:
            return write_files(request["files"])
        except (OSError, ValueError) as exc:
            print(f"cannot write the session's files: {exc}", file=sys.stderr)
            return "runtime_error", 1
    if "command" in request:
        stdin = request.get("stdin")
        given = stdin_file(stdin) if stdin else None
        try:
            return run_command(request["command"], timeout_s, given)
        finally:
            if given is not None:
                given.close()
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return with_stdin(request.get("stdin") or "", run_code, request["code"])
    except CellTimeout:  # the alarm rang between the cell's end and this line
        return "timeout", None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _load_judge():
    """The judge's module, from the source the parent put before this file's (``JUDGE_SOURCE``)."""
    module = types.ModuleType("session_judge")
    module.__dict__["__builtins__"] = __builtins__
    exec(compile(JUDGE_SOURCE, "<session judge>", "exec"), module.__dict__)  # noqa: F821 (the parent's)
    return module


JUDGE = _load_judge()
KERNEL, _judges = socket.socketpair()
if os.fork() == 0:  # the judge, before any of the session runs: never returns
    KERNEL.close()
    JUDGE.main(REQUESTS, REPLIES, _judges, encode_value)
_judges.close()
os.close(REQUESTS)  # the judge alone reads requests and writes replies
os.close(REPLIES)
sys.path[:] = SESSION_PATH
serve(KERNEL)
