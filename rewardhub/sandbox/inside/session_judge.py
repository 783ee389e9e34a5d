"""A session's judge: where the ``code`` verifier's tests run in a session, away from the session's code.

The session's kernel (:mod:`session_kernel`) runs whatever the session's calls send it, so anything
in its process (the built-ins, ``unittest``, the kernel's own functions, every object ``gc`` can
find, the frames below a call) is the session's to rewrite or read. A test run there could be
made to pass, or read what it expects. So the kernel forks this judge first, before it serves a
single call, and the judge never runs a line of the session's code:

- it alone holds the parent's channels (requests on one descriptor, replies on another): every
  request reaches the kernel through it, and every reply leaves through it, so the kernel never
  sees a test nor writes a test's reply;
- it is not dumpable, so a process of the same user can neither read its memory nor take its
  descriptors (``/proc/PID/mem``, ``/proc/PID/fd``, ``pidfd_getfd``; ptrace is refused by the
  sandbox's system-call filter anyway);
- for a test it asks the kernel for a **program process**, a fork of the kernel that has the
  session's variables and files and runs the response's code, if any, then answers calls on a
  socket: a name and plain arguments in, a plain value out (strictly tagged, :func:`decode_value`);
- the test itself runs in a **test process**, a fork of the judge (so a fork of a process the
  session's code never ran in) with the built-ins and modules as the interpreter had them, the
  session's folders off ``sys.path``, and every name the test needs from the session bound to a
  stub that calls the program process. Its record ("the check returned", a leaf's value) is
  written where only the judge reads it.

A stdin/stdout test is the program's output alone: the program process runs it, and the verifier
compares what it printed. A function-call test is asked of the program process by the judge
itself. What the session can still do: make its own functions return what they like (the
expected values never leave the verifier for asserts and calls, and for a whole check they stay
in the test process), or kill the judge, which leaves no reply: the call fails, never passes.

What a test sees of the session differs from a fork of it in one way: the session's values reach
it as copies of plain data and its functions as stubs, so a test that hands the program an object
of its own, or reads what the program changed in an argument, fails rather than passes; a module
the session imported is the system's module, or, if only the session has it, a stub of it.

Standard library only: this file runs in the sandbox (the kernel loads it from its source before
it forks the judge).
"""

import ast
import base64
import builtins
import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import time

PR_SET_DUMPABLE = 4
JUDGE_FILE = "<session judge>"
"""The name the kernel compiles this file under."""
MAX_DEPTH = 64
LINE_CAP = 16 << 20
"""The largest message of the program process (a value it returns): past it the test fails."""
FRAME_CAP = 1 << 20
"""The largest message of the kernel to the judge (replies are a few words)."""
GRACE_S = 0.25
"""How long past a test's time limit its processes may take to end before they are killed (twice
that, at worst, stays under the parent's own grace before it kills the whole session)."""
EXCEPTIONS = {
    name: value for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, Exception)
}


class ProgramGone(Exception):
    """The program process exited, or answered something that is not an answer, during a test."""


# --- messages ----------------------------------------------------------------------------------
# Kernel and judge speak frames (a length, then JSON; descriptors ride with the length), the program
# process speaks JSON lines on its socket.


def send_frame(sock, message, fds=()):
    body = json.dumps(message).encode()
    header = struct.pack(">I", len(body))
    if fds:
        socket.send_fds(sock, [header], list(fds))
    else:
        sock.sendall(header)
    sock.sendall(body)


def recv_frame(sock, cap=None):
    """One frame and the descriptors that came with it; None at the end of the stream."""
    header, fds = b"", []
    while len(header) < 4:
        data, more, _, _ = socket.recv_fds(sock, 4 - len(header), 8)
        fds += more
        if not data:
            return None
        header += data
    (size,) = struct.unpack(">I", header)
    if cap is not None and size > cap:
        raise ValueError(f"a message of {size} bytes")
    body = bytearray()
    while len(body) < size:
        data = sock.recv(min(size - len(body), 1 << 20))
        if not data:
            return None
        body += data
    return json.loads(body), fds


def send_line(sock, message):
    sock.sendall(json.dumps(message).encode() + b"\n")


class Lines:
    """JSON lines read from a socket, each within a deadline (None: wait) and a size cap."""

    def __init__(self, sock):
        self.sock = sock
        self.pending = b""

    def read(self, deadline=None):
        while b"\n" not in self.pending:
            if len(self.pending) > LINE_CAP:
                raise ProgramGone("the program answered more than the test can read")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                    raise TimeoutError
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                raise ProgramGone("the program process ended")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            raise ProgramGone("the program process answered something that is not JSON") from None
        if not isinstance(message, dict):
            raise ProgramGone("the program process answered something that is not an answer")
        return message


def decode_value(data, depth=0):
    """A value as the program process tagged it (the kernel's ``encode_value``): plain types only."""
    if depth > MAX_DEPTH + 2:
        raise ValueError("value nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not (isinstance(data, dict) and len(data) == 1):
        raise ValueError(f"malformed value {str(data)[:80]!r}")
    ((tag, body),) = data.items()
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(body, list):
        items = [decode_value(item, depth + 1) for item in body]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(body, list):
        return {decode_value(k, depth + 1): decode_value(v, depth + 1) for k, v in body}
    if tag == "int" and isinstance(body, str):
        return int(body)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "bytes" and isinstance(body, str):
        return base64.b64decode(body)
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        return complex(float(body[0]), float(body[1]))
    raise ValueError(f"malformed value tagged {tag!r}")


def described(exc):
    try:
        return f"{type(exc).__name__}: {exc}"[:2000]
    except BaseException:
        return type(exc).__name__


# --- the judge ---------------------------------------------------------------------------------


class Judge:
    def __init__(self, requests, replies, kernel, encode):
        self.requests, self.replies, self.kernel, self.encode = requests, replies, kernel, encode
        self.seq = 0

    def serve(self):
        pending = b""
        while True:
            while b"\n" not in pending:
                chunk = os.read(self.requests, 1 << 20)
                if not chunk:
                    return  # the parent closed the session: the kernel sees its end of requests
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            reply = self.test(request) if "test" in request else self.forward(request)
            if reply is None:
                return  # the kernel is gone: so is the session's state, and the run ends with it
            data = (json.dumps(reply) + "\n").encode()
            while data:
                data = data[os.write(self.replies, data) :]

    def forward(self, request):
        """A call of the session: the kernel runs it, and its reply goes back as it is."""
        self.seq += 1
        send_frame(self.kernel, {"seq": self.seq, "request": request})
        answer = self.from_kernel("reply")
        return answer if isinstance(answer, dict) else None

    def from_kernel(self, key, deadline=None):
        """The kernel's next message of this request that carries ``key`` (older ones are dropped)."""
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.kernel], [], [], left)[0]:
                    raise TimeoutError
            try:
                got = recv_frame(self.kernel, FRAME_CAP)
            except (OSError, ValueError):
                got = None
            if got is None:
                return None
            message, fds = got
            for fd in fds:
                os.close(fd)
            if isinstance(message, dict) and message.get("seq") == self.seq and key in message:
                return message[key]

    def test(self, request):
        spec, timeout_s = request["test"], float(request.get("timeout_s", 10.0))
        deadline = time.monotonic() + timeout_s
        files = [_anonymous() for _ in range(4)]  # stdin, stdout, stderr, record
        given, out, err, record = files
        given.write((spec.get("stdin") or "").encode())
        given.seek(0)
        mine, theirs = socket.socketpair()
        self.seq += 1
        serve = {"kind": spec["kind"], "program": request.get("program") or "", "names": test_names(spec)}
        order = {"seq": self.seq, "serve": serve}
        try:
            send_frame(self.kernel, order, [theirs.fileno(), given.fileno(), out.fileno(), err.fileno()])
        except OSError:
            return None
        theirs.close()
        try:
            verdict = self.run(spec, mine, (out, err), record, deadline)
        finally:
            mine.close()
        texts = []
        for handle in files[1:]:
            handle.seek(0)
            texts.append(handle.read(1 << 20).decode(errors="replace"))
            handle.close()
        given.close()
        status, exit_code, written = verdict
        return {"status": status, "exit_code": exit_code, "stdout": texts[0], "stderr": texts[1], "record": written}

    def run(self, spec, mine, out, record, deadline):
        """(verdict, exit code, record text) of one test, its processes ended."""
        try:
            program = self.from_kernel("pid", deadline)
        except TimeoutError:
            return "timeout", None, ""
        if program is None:
            return "runtime_error", None, ""
        try:
            written, test = self.test_side(spec, mine, out, record, deadline)
        except TimeoutError:
            _kill_group(program)
            self.from_kernel("status", time.monotonic() + GRACE_S)
            return "timeout", None, ""
        try:
            mine.shutdown(socket.SHUT_RDWR)  # the program process sees the end of its calls and ends
        except OSError:
            pass
        try:
            waited = self.from_kernel("status", deadline + GRACE_S)
        except TimeoutError:
            _kill_group(program)
            waited = self.from_kernel("status", time.monotonic() + GRACE_S) if spec["kind"] != "stdio" else None
            if spec["kind"] == "stdio" or waited is None:
                return "timeout", None, json.dumps(written) if written is not None else ""
        text = json.dumps(written) if written is not None else ""
        if test is not None:  # the test process's own end says how the test ended
            return (*_verdict(test), text)
        if not isinstance(waited, int):
            return "runtime_error", None, text
        return (*_verdict(waited), text)

    def test_side(self, spec, mine, out, record, deadline):
        """The judge's part of a test: (record, the test process's wait status or None)."""
        kind = spec["kind"]
        if kind == "stdio":
            return None, None
        lines = Lines(mine)
        try:
            ready = lines.read(deadline)
        except ProgramGone:
            return {"error": "the program exited or raised an exception before its test ran"}, None
        if ready.get("op") != "ready":
            if ready.get("compile_error"):
                return {"compile_error": "the program does not compile"}, None
            return {"error": "the program exited or raised an exception before its test ran"}, None
        if kind == "call":
            return self.call(spec, mine, lines, deadline), None
        if kind not in ("assert", "check"):
            return {"error": f"unknown test kind {kind!r}"}, None
        return self.fork_test(spec, ready, (mine, lines), out, record, deadline)

    def call(self, spec, mine, lines, deadline):
        try:
            args = self.encode(list(spec["args"]))
        except (TypeError, ValueError, RecursionError) as exc:
            return {"error": f"the test's arguments: {described(exc)}"}
        try:
            send_line(mine, {"op": "call", "name": spec["fn_name"], "args": args})
            answer = lines.read(deadline)
        except ProgramGone as exc:
            return {"error": str(exc)}
        except OSError:
            return {"error": "the program process ended"}
        if "value" in answer:
            return {"value": answer["value"]}  # the verifier decodes it strictly
        if "raised" in answer:
            return {"error": f"{answer['raised']}: {answer.get('message', '')}"[:2000]}
        return {"error": str(answer.get("error", "malformed answer"))[:2000]}

    def fork_test(self, spec, ready, program, out, record, deadline):
        """Run an assert or a whole check in a fork of the judge; (record, its wait status)."""
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the test process: never returns
            status = 1
            try:
                os.setpgid(0, 0)
                for fd in (self.requests, self.replies, self.kernel.fileno()):
                    os.close(fd)
                os.dup2(out[0].fileno(), 1)
                os.dup2(out[1].fileno(), 2)
                status = run_test(spec, ready.get("names"), Remote(*program), record, self.encode)
            finally:
                os._exit(status)
        try:
            waited = _wait(pid, deadline)
        finally:
            _kill_group(pid)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        record.seek(0)
        text = record.read(LINE_CAP).decode(errors="replace")
        try:
            written = json.loads(text) if text else None
        except ValueError:
            written = None
        return (written if isinstance(written, dict) else {"error": "the test wrote no record"}), waited


def _anonymous():
    """A file with no name anywhere (the session could open a named one, even for a moment)."""
    try:
        return open(os.memfd_create("session-test"), "w+b")
    except (AttributeError, OSError):
        return tempfile.TemporaryFile()  # O_TMPFILE where the folder's file system has it


def _wait(pid, deadline):
    """The child's wait status once it ends; TimeoutError past ``deadline``."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            done, waited = os.waitpid(pid, os.WNOHANG)
            if done:
                return waited
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(0.002)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _verdict(waited):
    if os.WIFEXITED(waited):
        code = os.WEXITSTATUS(waited)
        return {0: "ok", 3: "compile_error", 124: "timeout", 137: "memory"}.get(code, "runtime_error"), code
    return ("memory" if os.WTERMSIG(waited) == signal.SIGKILL else "runtime_error"), None


def _kill_group(pid):
    if not isinstance(pid, int) or pid <= 1 or pid == os.getpgrp():
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


# --- the test process ----------------------------------------------------------------------------


def test_names(spec):
    """The names a test needs from the session (the program process describes them when it is ready)."""
    if spec["kind"] == "check":
        return [str(name) for name in spec.get("names") or ()]
    if spec["kind"] != "assert":
        return []
    try:
        return list(dict.fromkeys(n for source in (spec["setup"], *spec["leaves"]) for n in free_names(source)))
    except (SyntaxError, ValueError):  # the test process reports it, compiling the test
        return []


def run_test(spec, described, remote, record, encode):
    """Run one assert or whole check with the session's names (``described`` by the program process)
    bound as copies and stubs; write its record; the exit status."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    kind = spec["kind"]
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        remote.bind(namespace, test_names(spec), described)
        written = _assert(spec, namespace, encode) if kind == "assert" else _check(spec["source"], namespace)
    except ProgramGone as exc:
        written = {"check": "failed", "message": str(exc)} if kind == "check" else {"error": str(exc)}
    record.write(json.dumps(written).encode())
    record.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


def _assert(spec, namespace, encode):
    try:
        exec(compile(spec["setup"], "<test setup>", "exec"), namespace)
    except ProgramGone:
        raise
    except BaseException as exc:
        return {"error": f"test setup raised {described(exc)}"}
    values = []
    for leaf in spec["leaves"]:
        try:
            values.append({"value": encode(eval(compile(leaf, "<test>", "eval"), namespace))})
        except BaseException as exc:
            values.append({"error": described(exc)})
    return {"values": values}


def _check(source, namespace):
    try:
        exec(compile(source, "<test>", "exec"), namespace)
    except ProgramGone as exc:
        return {"check": "failed", "message": str(exc)}
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == JUDGE_FILE:
            tb = tb.tb_next
        sys.__excepthook__(type(exc), exc.with_traceback(tb), tb)  # as Python shows it, without the judge's frames
        return {"check": "failed", "message": described(exc)[:500]}
    return {"check": "passed"}


def free_names(source):
    """Names the test reads but never binds and that are not built-ins: what it needs from the session."""
    tree = ast.parse(source)
    loaded, bound = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded.append if isinstance(node.ctx, ast.Load) else bound.add)(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    known = bound | set(dir(builtins))
    return [name for name in loaded if name not in known]


def _forget_session_folders():
    """The session can write its folders (a ``unittest.py`` there): the test imports only the system's."""
    me = os.getuid()

    def ours(path):
        path = os.path.abspath(path or ".")
        while True:
            try:
                info = os.stat(path)
            except OSError:
                return True
            if info.st_uid == me or os.access(path, os.W_OK):  # /tmp too: sticky, but new names go in
                return True
            if path == os.path.dirname(path):
                return False
            path = os.path.dirname(path)

    sys.path[:] = [entry for entry in sys.path if entry and not ours(entry)]
    sys.path_importer_cache.clear()


class Remote:
    """The session's names, asked of the program process: plain values are copied, the rest are stubs."""

    def __init__(self, sock, lines):
        self.sock, self.lines = sock, lines

    def ask(self, message):
        try:
            send_line(self.sock, message)
        except OSError:
            raise ProgramGone("the program process ended during its test") from None
        return self.lines.read()

    def bind(self, namespace, names, found):
        for name, kind in (found if isinstance(found, dict) else {}).items():
            if name in names:
                value = self.value(str(name), kind)
                if value is not _MISSING:
                    namespace[name] = value

    def value(self, name, kind):
        if kind == "callable":
            return self.stub(name)
        if isinstance(kind, dict) and "value" in kind:
            try:
                return decode_value(kind["value"])
            except (ValueError, TypeError, KeyError, RecursionError):
                return _MISSING
        if isinstance(kind, dict) and isinstance(kind.get("module"), str):
            try:
                return __import__(kind["module"], fromlist=["_"])
            except ImportError:  # a module of the session's own files: its names are asked for too
                return RemoteModule(self, name)
        return _MISSING

    def stub(self, name):
        remote = self

        def call(*args, **kwargs):
            try:
                message = {"op": "call", "name": name, "args": _encode(list(args)), "kwargs": _encode(dict(kwargs))}
            except (TypeError, ValueError) as exc:
                raise TypeError(f"cannot pass {exc} to the session's {name}()") from None
            answer = remote.ask(message)
            if "value" in answer:
                try:
                    return decode_value(answer["value"])
                except (ValueError, TypeError, KeyError, RecursionError):
                    raise TypeError(f"{name}() returned what cannot be compared") from None
            if "raised" in answer:  # the session's exception, as a built-in type the test can expect
                raise EXCEPTIONS.get(str(answer["raised"]), RuntimeError)(str(answer.get("message", ""))[:2000])
            raise TypeError(str(answer.get("error", "malformed answer"))[:2000])

        call.__name__ = call.__qualname__ = name.rsplit(".", 1)[-1]
        return call


_MISSING = object()
_encode = None
"""The kernel's ``encode_value``, as it was before the session ran (set by :func:`main`)."""


class RemoteModule:
    def __init__(self, remote, name):
        self._remote, self._name = remote, name

    def __getattr__(self, attr):
        name = f"{self._name}.{attr}"
        found = self._remote.ask({"op": "describe", "names": [name]}).get("names")
        value = self._remote.value(name, (found or {}).get(name)) if isinstance(found, dict) else _MISSING
        if value is _MISSING:
            raise AttributeError(f"module {self._name!r} has no attribute {attr!r}")
        return value


def main(requests, replies, kernel, encode):
    """The judge's life (in the fork the kernel made before serving anything); never returns."""
    global _encode
    status = 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        _encode = encode
        _forget_session_folders()  # once: every test process is a fork of this one
        Judge(requests, replies, kernel, encode).serve()
    except BaseException:
        status = 1
    finally:
        os._exit(status)
