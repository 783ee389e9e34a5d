"""A session's kernel: one long-lived program in a session's sandbox that runs its calls, REPL style.

The parent starts it as a Python run of the fork server (the program's uid, its rlimits, the
sandbox's cgroups and system-call filter, like any submission) and keeps it for the session's life.
The run's pipes become the kernel's channels:

- fd 0 brings requests, one JSON object a line: ``{"code": ..., "timeout_s": ...}`` (Python, run in
  one namespace that lives as long as the kernel), ``{"command": ...}`` (a shell command),
  ``{"files": {path: text}}`` (the session's files, written as its own user) or ``{"test": spec,
  "program": ...}`` (one of the ``code`` verifier's tests, run in a fork of the kernel: it sees the
  session's variables and files; the variables it changes go with the fork, files it writes stay);
- fd 1 and fd 2 are the calls' stdout and stderr, as the program and its children write them;
- fd 3 takes one reply line per request, written after the call's output was flushed:
  ``{"status": ..., "exit_code": ...}`` with the words of the sandbox's verdicts.

Both channels move to descriptors of their own first, and a call's stdin is its request's
``"stdin"`` (an unlinked temporary file) or else /dev/null, never the request channel, so a call's
``input()`` cannot eat the next request. Nothing the kernel says is trusted beyond the session's own
caller: the code it runs shares its process. Rewards never come from here; scoring a session runs
its tests in a fresh program of the fork server instead.

A call is interrupted at its time limit by SIGALRM (its state is kept); a call that ignores the alarm
is killed from outside by the parent a moment later, and the kernel with it.

Standard library only: this file runs in the sandbox, where rewardhub is not installed.
"""

import ast
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types

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


def _reply(message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(REPLIES, data) :]


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


# --- the code verifier's tests, in a fork of the session -------------------------------------
# A test's record carries values, never verdicts: the expected outputs stay with the verifier,
# which compares. Values are type-tagged as rewardhub.sandbox.inside.wire.encode_value tags them
# (its decode_value reads them strictly in the parent; tests/sandbox/test_sandbox_wire.py pins the two together).

MAX_DEPTH = 64
TEST_GRACE_S = 0.5
"""How long past its alarm a test's fork may run before the kernel kills it."""


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


def _test_in_fork(spec, program):
    """In the fork: the program (the response's code, if any) in the session's namespace, then the
    test. Returns (exit status, record or None)."""
    kind = spec["kind"]
    status = _run_program(program) if program else 0
    if status == 3:
        return 3, {"compile_error": "the program does not compile"}
    if kind == "stdio":
        return status, None
    if status != 0:
        return status, {"error": "the program exited or raised an exception before its test ran"}
    if kind == "call":
        function = NAMESPACE.get(spec["fn_name"])
        if function is None and isinstance(NAMESPACE.get("Solution"), type):
            function = getattr(NAMESPACE["Solution"](), spec["fn_name"], None)
        if not callable(function):
            return 0, {"error": f"the session defines no function {spec['fn_name']!r}"}
        try:
            return 0, _encoded(function(*spec["args"]))
        except CellTimeout:
            raise
        except BaseException as exc:
            _print_exception(exc)
            return 0, {"error": _described(exc)}
    namespace = dict(NAMESPACE)
    if kind == "assert":
        try:
            exec(compile(spec["setup"], "<test setup>", "exec"), namespace)
        except CellTimeout:
            raise
        except BaseException as exc:
            _print_exception(exc)
            return 0, {"error": f"test setup raised {_described(exc)}"}
        values = []
        for leaf in spec["leaves"]:
            try:
                values.append(_encoded(eval(compile(leaf, "<test>", "eval"), namespace)))
            except CellTimeout:
                raise
            except BaseException as exc:
                values.append({"error": _described(exc)})
        return 0, {"values": values}
    if kind == "check":
        try:
            exec(compile(spec["source"], "<test>", "exec"), namespace)
        except CellTimeout:
            raise
        except BaseException as exc:
            _print_exception(exc)
            return 0, {"check": "failed", "message": _described(exc)[:500]}
        return 0, {"check": "passed"}
    return 1, {"error": f"unknown test kind {kind!r}"}


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


def run_test(request, timeout_s):
    """One test of the code verifier in a fork of the kernel, under its own clock; its verdict, with
    the fork's stdout, stderr and record in the reply (the kernel's own state is untouched)."""
    _flush()
    out, err, record = tempfile.TemporaryFile(), tempfile.TemporaryFile(), tempfile.TemporaryFile()
    given = stdin_file(request["test"].get("stdin") or "")
    pid = os.fork()
    if pid == 0:  # the fork: never returns
        status = 1
        try:
            os.setpgid(0, 0)
            os.close(REQUESTS)  # the kernel's channels are not the test's
            os.close(REPLIES)
            for fd, handle in ((0, given), (1, out), (2, err)):
                os.dup2(handle.fileno(), fd)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            status, written = _test_in_fork(request["test"], request.get("program") or "")
            signal.setitimer(signal.ITIMER_REAL, 0)
            if written is not None:
                record.write(json.dumps(written).encode())
                record.flush()
        except CellTimeout:
            status = 124
        except MemoryError:
            status = 137
        except BaseException as exc:
            _print_exception(exc)
        finally:
            _flush()
            os._exit(status)
    deadline = time.monotonic() + timeout_s + TEST_GRACE_S
    waited = 0
    while True:
        done, waited = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            _kill_group(pid)
            os.waitpid(pid, 0)
            waited = None
            break
        time.sleep(0.002)
    _kill_group(pid)  # what the test left running goes with it
    texts = []
    for handle in (out, err, record):
        handle.seek(0)
        texts.append(handle.read(1 << 20).decode(errors="replace"))
        handle.close()
    given.close()
    if waited is None or (os.WIFEXITED(waited) and os.WEXITSTATUS(waited) == 124):
        status, exit_code = "timeout", None
    elif os.WIFEXITED(waited):
        exit_code = os.WEXITSTATUS(waited)
        status = {0: "ok", 3: "compile_error", 137: "memory"}.get(exit_code, "runtime_error")
    else:
        status, exit_code = ("memory" if os.WTERMSIG(waited) == signal.SIGKILL else "runtime_error"), None
    return status, exit_code, {"stdout": texts[0], "stderr": texts[1], "record": texts[2]}


def serve():
    signal.signal(signal.SIGALRM, _alarm)
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(REQUESTS, 1 << 20)
            if not chunk:
                return  # the parent closed the session
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        request = json.loads(line)
        timeout_s = float(request.get("timeout_s", 10.0))
        extra = {}
        if "test" in request:
            status, exit_code, extra = run_test(request, timeout_s)
        elif "files" in request:
            try:
                status, exit_code = write_files(request["files"])
            except (OSError, ValueError) as exc:
                print(f"cannot write the session's files: {exc}", file=sys.stderr)
                status, exit_code = "runtime_error", 1
        elif "command" in request:
            stdin = request.get("stdin")
            handle = stdin_file(stdin) if stdin else None
            try:
                status, exit_code = run_command(request["command"], timeout_s, handle)
            finally:
                if handle is not None:
                    handle.close()
        else:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            try:
                status, exit_code = with_stdin(request.get("stdin") or "", run_code, request["code"])
            except CellTimeout:  # the alarm rang between the cell's end and this line
                status, exit_code = "timeout", None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        _flush()
        _reply({"status": status, "exit_code": exit_code, **extra})


serve()
