"""One session's sandbox: a warm sandbox of its own, with a kernel that keeps the session's state.

A session is not a job of the shared pool: it holds one :class:`~rewardhub.sandbox.warm.WarmSandbox`
(its own bubblewrap namespaces, uid, cgroups, system-call filter and scratch) for its whole life,
and its scratch is never wiped between calls, so every runtime keeps the session's files. Its one
long-lived program is the kernel (:mod:`rewardhub.sandbox.inside.session_kernel`), started as an
ordinary Python run of the fork server through :meth:`WarmSandbox.open_run`; its variables are
the session's interpreter state. The cgroup limits (memory, processes) are the sandbox's, so they
hold across calls: what one call allocates and keeps counts against the next.

Each call ends in one of the sandbox's verdict words. The parent keeps the clock: the kernel
interrupts a call at its limit (``timeout``, state kept); a call that does not stop is killed from
outside ``HARD_GRACE_S`` later, and so is one past its output cap (``output_limit``), or the kernel
dies (a crash, ``os._exit``, the kernel's memory killer). Then the kernel is started afresh: the
files stay, the variables are gone, and the result says so (``details["state"] == "lost"``).

A test command that scores a session runs in a fresh program of the fork server (:meth:`run_tests`),
never through the kernel, whose code the session's calls could have changed, and with the
interpreter's user-level hooks off (:func:`test_environment`). The ``code`` verifier's tests run
through the kernel's judge, which the kernel forks before it serves any call
(:meth:`run_code_test`)."""

from __future__ import annotations

import json
import os
import secrets
import select
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sandbox.errors import SandboxError
from ..sandbox.inside import wire
from ..sandbox.isolation import lease_uid
from ..sandbox.jobs import _encoded, _encoded_bytes
from ..sandbox.limits import Limits
from ..sandbox.pool import BACKENDS
from ..sandbox.settings import SandboxSettings
from ..sandbox.streams import Pumped
from ..sandbox.verdicts import VERDICTS, RunResult, judge
from ..sandbox.warm import Execution, WarmSandbox

__all__ = ["HARD_GRACE_S", "KERNEL_SOURCE", "SessionLimits", "SessionSandbox", "test_environment", "test_run"]

_INSIDE = Path(__file__).resolve().parents[1] / "sandbox" / "inside"
"""Where the sandbox's own programs are: the kernel ships into the sandbox as source, from there."""
KERNEL_SOURCE = (
    f"JUDGE_SOURCE = {(_INSIDE / 'session_judge.py').read_text()!r}\n" + (_INSIDE / "session_kernel.py").read_text()
)
"""The kernel's program: :mod:`~rewardhub.sandbox.inside.session_kernel`, given the source of the judge
it forks first (:mod:`~rewardhub.sandbox.inside.session_judge`) in ``JUDGE_SOURCE``."""
HARD_GRACE_S = 1.0
"""How long past its time limit a call that ignores the kernel's alarm may run before it is killed."""
KILL_GRACE_S = 10.0
"""How long the server may take to report a killed kernel before the session counts as lost."""
CHUNK = 1 << 16
FRESH_PYTHON = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/dev/null/pycache"}
"""Tests read the session's sources, never a cached compile of them: a file rewritten within the
second its .pyc was written, at the same size, would otherwise import as its old self."""
ISOLATED_PYTHON = (_INSIDE / "isolated_python.py").read_text()
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
PYTHON_SHIM = """#!/bin/bash
# python for a session's tests: the system's interpreter, isolated from what the session left (see {boot})
options=()
while [ $# -gt 0 ]; do
  case "$1" in
    -c|-m|-|--) break ;;
    -W|-X|--check-hash-based-pycs) options+=("$1" "$2"); shift 2 ;;
    -*) options+=("$1"); shift ;;
    *) break ;;
  esac
done
[ "$1" = -- ] && shift
for real in /usr/local/bin/python3 /usr/bin/python3 /bin/python3; do
  [ -x "$real" ] && exec "$real" -I -B -X pycache_prefix=/dev/null/pycache "${{options[@]}}" {boot} "$@"
done
echo "python3: no interpreter in {path}" >&2
exit 127
"""


@dataclass(frozen=True)
class SessionLimits:
    """What a session may use, across all its calls (the sandbox's cgroups) and per call."""

    memory_mb: int = 512
    """Memory of everything the session keeps and runs at once (one cgroup for its life)."""
    max_processes: int = 64
    max_file_mb: int = 64
    max_open_files: int = 256
    max_output_bytes: int = 1 << 20
    """stdout and stderr of one call together."""
    lifetime_s: float = 3600.0
    """The kernel's CPU limit follows it: a session cannot burn more CPU seconds than it may live."""
    call_timeout_s: float = 10.0
    """A call's wall-clock limit when the call names none (the contract's session ``timeout_s``)."""

    def kernel_limits(self) -> Limits:
        return Limits(
            timeout_s=self.lifetime_s,
            memory_mb=self.memory_mb,
            max_processes=self.max_processes,
            max_file_mb=self.max_file_mb,
            max_open_files=self.max_open_files,
            max_output_bytes=self.max_output_bytes,
        )


class SessionSandbox:
    """A sandbox and its kernel. One call at a time (the caller serialises them)."""

    def __init__(self, settings: SandboxSettings, limits: SessionLimits) -> None:
        self.settings = settings
        self.limits = limits
        self.calls = 0
        self.kernel_starts = 0
        self._fds: dict[str, int] | None = None
        lease = lease_uid(settings.uid_base, settings.uid_count)
        try:
            isolation = BACKENDS[settings.backend](settings, lease)
        except BaseException:
            lease.release()
            raise
        self.sandbox = WarmSandbox(isolation, settings)
        self.sandbox.start()  # closes itself (and its isolation) if it fails

    @property
    def uid(self) -> int:
        return self.sandbox.isolation.program_uid

    @property
    def alive(self) -> bool:
        """The sandbox's first process is still there (a session killed from outside is not)."""
        process = self.sandbox._process
        return not self.sandbox.broken and process is not None and process.poll() is None

    def write_files(self, files: Mapping[str, str | bytes]) -> RunResult | None:
        """Put files in the scratch as the session's own user (its calls may change them); None when
        they are all there, else the failed call's result."""
        if not files:
            return None
        result = self.call({"files": _encoded(files)}, 30.0)
        return None if result.ok else result

    # --- calls ----------------------------------------------------------------------------------

    def call(self, request: dict[str, Any], timeout_s: float) -> RunResult:
        """Run one call (``{"code": ...}`` or ``{"command": ...}``) in the kernel; its verdict."""
        if self._fds is None:
            self._start_kernel()
        self.calls += 1
        oom_before = self.sandbox.isolation.oom_kills()
        line = (json.dumps({**request, "timeout_s": timeout_s}) + "\n").encode()
        started = time.monotonic()
        try:
            _write_all(self._fds["stdin"], line)  # type: ignore[index]
        except OSError:  # the kernel (or its judge) is gone: it exited on its own between calls
            self.sandbox.kill_run()  # a kernel whose judge was killed must end too
            return self._kernel_died(
                Pumped(streams={"stdout": bytearray(), "stderr": bytearray()}), started, oom_before
            )
        return self._wait_reply(started, timeout_s, oom_before)

    def _wait_reply(self, started: float, timeout_s: float, oom_before: int | None) -> RunResult:
        fds = self._fds
        assert fds is not None
        control = self.sandbox.control
        assert control is not None
        seen = Pumped(streams={"stdout": bytearray(), "stderr": bytearray()})
        reply = bytearray()
        deadline = started + timeout_s + HARD_GRACE_S
        sources = {fds["stdout"]: seen.streams["stdout"], fds["stderr"]: seen.streams["stderr"], fds["record"]: reply}
        open_fds = set(sources)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                seen.timed_out = True
                return self._kill_kernel(seen, started, oom_before)
            readable, _, _ = select.select([*open_fds, control], [], [], left)
            for fd in readable:
                if fd is control:
                    continue
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                sources[fd].extend(chunk)
            if len(seen.streams["stdout"]) + len(seen.streams["stderr"]) > self.limits.max_output_bytes:
                seen.output_limited = True
                return self._kill_kernel(seen, started, oom_before)
            if b"\n" in reply:
                self._drain(seen)
                return self._answer(bytes(reply), seen, started, oom_before)
            if control in readable:  # the server reports the kernel's end: it died during the call
                self._drain(seen)
                return self._kernel_died(seen, started, oom_before)

    def _answer(self, reply: bytes, seen: Pumped, started: float, oom_before: int | None) -> RunResult:
        elapsed_ms = (time.monotonic() - started) * 1000.0
        answer: Any = None
        try:
            answer = json.loads(reply.split(b"\n", 1)[0])
            verdict, exit_code = answer["status"], answer["exit_code"]
        except (ValueError, KeyError, TypeError):
            verdict, exit_code = "sandbox_error", None
        if verdict not in VERDICTS or not isinstance(exit_code, int | None):
            verdict, exit_code = "sandbox_error", None
        oom_after = self.sandbox.isolation.oom_kills()
        if verdict != "ok" and oom_before is not None and oom_after is not None and oom_after > oom_before:
            verdict = "memory"  # a child of the call was killed for memory (the kernel survived)
        cap = self.limits.max_output_bytes
        details = {**self.sandbox.isolation.details(), "state": "kept"}
        if verdict == "sandbox_error":
            details["message"] = "the session's kernel answered something that is not a verdict"
        if isinstance(answer, dict) and "record" in answer:  # a test run in a fork: its own output and record
            stdout, stderr = str(answer.get("stdout", ""))[:cap], str(answer.get("stderr", ""))[:cap]
            return RunResult(verdict, exit_code, stdout, stderr, elapsed_ms, _record(answer["record"]), details)
        return RunResult(
            verdict, exit_code, _text(seen, "stdout", cap), _text(seen, "stderr", cap), elapsed_ms, None, details
        )

    def _kill_kernel(self, seen: Pumped, started: float, oom_before: int | None) -> RunResult:
        """Past the hard deadline or the output cap: kill the kernel from outside, start a fresh one."""
        self.sandbox.kill_run()
        return self._kernel_died(seen, started, oom_before)

    def _kernel_died(self, seen: Pumped, started: float, oom_before: int | None) -> RunResult:
        """The kernel ended during a call: read the server's report, judge it, start a fresh kernel."""
        seen.exited = self._read_exited()
        seen.elapsed_s = time.monotonic() - started
        self._close_kernel_fds()
        limits = self.limits.kernel_limits()
        oom = self.sandbox.isolation.oom_kills()
        verdict = judge(seen, limits, (None, None), self.sandbox.isolation.details())
        details = {**verdict.details, "state": "lost"}
        if seen.exited is None:
            self.sandbox.broken = True
            return RunResult("sandbox_error", None, verdict.stdout, verdict.stderr, verdict.elapsed_ms, None, details)
        status = verdict.verdict
        if not (seen.timed_out or seen.output_limited) and oom is not None and oom > (oom_before or 0):
            status = "memory"
        elif status == "ok":  # the kernel returned between requests: to the caller, the call failed
            status = "runtime_error"
        try:
            self._start_kernel()
        except SandboxError as exc:
            details["message"] = f"the session could not start a fresh kernel: {exc.message}"
        return RunResult(status, verdict.exit_code, verdict.stdout, verdict.stderr, verdict.elapsed_ms, None, details)

    def _read_exited(self) -> dict[str, Any] | None:
        control = self.sandbox.control
        if control is None:
            return None
        try:
            control.settimeout(KILL_GRACE_S)
            message, fds = wire.recv_message(control)
            control.settimeout(None)
        except (EOFError, OSError, ValueError):
            return None
        for fd in fds:
            os.close(fd)
        return message if message.get("op") == "exited" else None

    def _drain(self, seen: Pumped) -> None:
        """Read what the pipes already hold (the kernel flushed before it replied)."""
        assert self._fds is not None
        for name in ("stdout", "stderr"):
            fd = self._fds[name]
            while select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                seen.streams[name].extend(chunk)

    # --- the kernel -----------------------------------------------------------------------------

    def start_kernel(self) -> None:
        """Start the kernel ahead of the first call (else that call starts it)."""
        if self._fds is None:
            self._start_kernel()

    def _start_kernel(self) -> None:
        payload = {"path": f"{self.sandbox.scratch}/.session_kernel.py", "code": KERNEL_SOURCE, "mode": "stdio"}
        self._fds = self.sandbox.open_run(Execution("python", self.limits.kernel_limits(), payload=payload))
        self.kernel_starts += 1

    def stop_kernel(self) -> None:
        """End the kernel between calls (its state goes; the files stay): the server is free again."""
        if self._fds is None:
            return
        os.close(self._fds.pop("stdin"))  # the kernel returns on the end of its requests
        exited = self._read_exited()
        self._close_kernel_fds()
        if exited is None:
            self.sandbox.broken = True
            raise SandboxError("the session's kernel did not stop")

    def _close_kernel_fds(self) -> None:
        for fd in (self._fds or {}).values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = None

    # --- scoring --------------------------------------------------------------------------------

    def run_code_test(self, program: str, spec: dict[str, Any], timeout_s: float) -> RunResult:
        """One of the ``code`` verifier's tests (``spec`` without its expected value), run by the
        kernel's judge (:mod:`~rewardhub.sandbox.inside.session_judge`): the program runs in a fork
        of the kernel, which has the session's variables and files (its changes go with it), and the
        test in a process the session's code never ran in, calling the program's functions across a
        socket. Its stdout, stderr and record come back; the verifier compares."""
        return self.call({"test": spec, "program": program}, timeout_s)

    def run_tests(self, command: str, timeout_s: float, files: Mapping[str, str | bytes] | None = None) -> RunResult:
        """Run a test command on the session's files in a fresh program of the fork server (the
        kernel is stopped first, so nothing the session's calls left running can answer for it),
        in :func:`test_environment`: the ``python3`` it starts runs with the session's hooks off."""
        self.stop_kernel()
        limits = self.limits.kernel_limits().with_(timeout_s=timeout_s)
        if files:  # what the session left where a test file goes (a folder, say) must not block the tests
            clear = ("/bin/rm", "-rf", "--", *sorted(files))
            self.sandbox.run(Execution("argv", limits.with_(timeout_s=30.0), argv=clear))
        return test_run(self.sandbox, command, limits, files)

    def close(self) -> None:
        self._close_kernel_fds()
        self.sandbox.close()


def test_run(sandbox: WarmSandbox, command: str, limits: Limits, files: Mapping[str, Any] | None = None) -> RunResult:
    """Run a test command in ``sandbox`` with ``files`` written first (text, or bytes as
    :func:`~rewardhub.sandbox.jobs._encoded_bytes` writes them), in :func:`test_environment`; the
    one way a session's tests run, in the session's own sandbox or in a fresh one
    (:mod:`rewardhub.sessions.fresh`)."""
    ours, env, shell = test_environment(sandbox.isolation.scratch[-1])
    given = dict(files or {})
    encoded = {
        path: content if isinstance(content, dict) else _encoded({path: content})[path]
        for path, content in given.items()
    }
    payload = {"files": {**encoded, **ours}}
    execution = Execution("argv", limits, argv=("/bin/bash", "-c", shell, "bash", command), payload=payload, env=env)
    return sandbox.run(execution)


def test_environment(root: str) -> tuple[dict[str, Any], dict[str, str], str]:
    """The files, environment and shell a test command runs with: a folder of a fresh random name
    under ``root``, written by the sandbox's server before the command starts (so the session, whose
    processes are all gone by then, could neither foresee nor write it), holding the ``python3`` and
    ``python`` the fixed ``PATH`` finds first (:mod:`~rewardhub.sandbox.inside.isolated_python`)
    and an empty ``HOME``; ``PYTHONNOUSERSITE`` for any other Python the command starts. The shell
    (``bash -c SHELL bash COMMAND``) defines ``python3`` and ``python`` as functions calling them by
    absolute path, exported to the scripts it runs, so a ``PATH`` the command takes from the
    session's files (an ``.env`` it loads) does not lead them to a program the session planted."""
    folder = f"{root}/.rewardhub-tests-{secrets.token_hex(8)}"
    boot = f"{folder}/isolated_python.py"
    shim = _encoded_bytes(PYTHON_SHIM.format(boot=boot, path=SYSTEM_PATH).encode(), executable=True)
    files: dict[str, Any] = {boot: ISOLATED_PYTHON, f"{folder}/bin/python3": shim, f"{folder}/bin/python": shim}
    files[f"{folder}/home/.keep"] = ""
    env = {
        **FRESH_PYTHON,
        "PATH": f"{folder}/bin:{SYSTEM_PATH}",
        "HOME": f"{folder}/home",
        "PYTHONNOUSERSITE": "1",
    }
    shell = "".join(f'{name}() {{ {folder}/bin/python3 "$@"; }}\n' for name in ("python3", "python"))
    return files, env, shell + 'export -f python3 python\neval "$1"'


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _record(text: Any) -> dict[str, Any] | None:
    """A test's record as the kernel relayed it (JSON text; none when the test wrote none)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return {"error": "malformed result record"}
    return record if isinstance(record, dict) else {"error": "malformed result record"}


def _text(seen: Pumped, name: str, cap: int) -> str:
    return bytes(seen.streams.get(name, b"")[:cap]).decode("utf-8", errors="replace")
