"""A session's kernel: one long-lived program in a session's sandbox that runs its calls, REPL style.

The parent starts it as a Python run of the fork server (the program's uid, its rlimits, the
sandbox's cgroups and system-call filter, like any submission) and keeps it for the session's life.
The run's pipes become the kernel's channels:

- fd 0 brings requests, one JSON object a line: ``{"code": ..., "timeout_s": ...}`` (Python, run in
  one namespace that lives as long as the kernel), ``{"command": ...}`` (a shell command) or
  ``{"files": {path: text}}`` (the session's files, written as its own user);
- fd 1 and fd 2 are the calls' stdout and stderr, as the program and its children write them;
- fd 3 takes one reply line per request, written after the call's output was flushed:
  ``{"status": ..., "exit_code": ...}`` with the words of the sandbox's verdicts.

Both channels move to descriptors of their own first, and a call's stdin is /dev/null, so a call's
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


def run_command(command, timeout_s):
    """Run one shell command in its own process group, in the session's working directory (a ``cd``
    in it moves the session, Python's calls too); the group is killed at its end or time limit."""
    _flush()
    where, told = os.pipe()
    try:
        process = subprocess.Popen(
            [SHELL, "-c", WRAPPER, SHELL, command, str(told)],
            stdin=subprocess.DEVNULL,
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
        if "files" in request:
            try:
                status, exit_code = write_files(request["files"])
            except (OSError, ValueError) as exc:
                print(f"cannot write the session's files: {exc}", file=sys.stderr)
                status, exit_code = "runtime_error", 1
        elif "command" in request:
            status, exit_code = run_command(request["command"], timeout_s)
        else:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            try:
                status, exit_code = run_code(request["code"])
            except CellTimeout:  # the alarm rang between the cell's end and this line
                status, exit_code = "timeout", None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        _flush()
        _reply({"status": status, "exit_code": exit_code})


serve()
