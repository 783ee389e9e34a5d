"""One warm sandbox: a fork server behind a backend's walls, and the parent's handle on it.

A sandbox runs one thing at a time. ``run`` hands the server the pipes of one run and a private
payload pipe (code and test), then :func:`~rewardhub.sandbox.streams.pump` keeps the clock and the
output caps; ``reset`` ends a job (no process left, scratch emptied). A sandbox that misbehaves in
any way the parent cannot explain is marked broken, and the pool replaces it.
"""

from __future__ import annotations

import fcntl
import json
import marshal
import os
import select
import socket
import subprocess
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.inside import wire
from rewardhub.sandbox.inside.wire import MARSHAL_VERSION
from rewardhub.sandbox.isolation import Isolation
from rewardhub.sandbox.limits import CHILDREN_AHEAD, Limits
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.streams import Pace, pump
from rewardhub.sandbox.verdicts import RunResult, judge, sandbox_failure

__all__ = ["Execution", "WarmSandbox"]

RECORD_CAP = 16 << 20
"""Largest result record (one test's encoded values): past it the run is an output_limit."""


@dataclass(frozen=True)
class Execution:
    """One piece of work for the server: a native program, a Python program, writing files, or
    reading files back (``fetch``, as the program's user)."""

    kind: Literal["argv", "python", "write", "fetch"]
    limits: Limits
    argv: tuple[str, ...] = ()
    payload: dict[str, Any] | None = field(default=None)
    """Read by the forked child after the fork, so the server never holds it."""
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    """Added to the sandbox's fixed environment for a native program."""
    last: bool = False
    """The job's last run: the server resets the sandbox right after it and says so in the same
    reply, which saves :meth:`WarmSandbox.reset` a round trip."""
    pace_s: float | None = None
    """A paced run (Python's series of tests, a line each on the result channel): each test's own
    clock, from the line before it, and ``limits.max_output_bytes`` each (:class:`streams.Pace`);
    ``limits.timeout_s`` bounds the whole run."""


PAYLOAD_PIPE_BYTES = 1 << 20
"""A cached build's program travels in the payload: a wide pipe moves it in a few wakeups, not hundreds."""


def _widen(fd: int) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PAYLOAD_PIPE_BYTES)
    except (OSError, AttributeError):  # past /proc/sys/fs/pipe-max-size, or not Linux: the default will do
        pass


def _payload_bytes(payload: dict[str, Any]) -> bytes:
    """The payload as the child reads it: marshal (one C call in a freshly forked child, where
    ``json.loads`` pays ~60 page faults; the bytes come from this trusted process only). What marshal
    does not take (a subclass of str, say) goes as JSON would have made it: plain types."""
    try:
        return marshal.dumps(payload, MARSHAL_VERSION)
    except ValueError:
        return marshal.dumps(json.loads(json.dumps(payload)), MARSHAL_VERSION)


class WarmSandbox:
    def __init__(self, isolation: Isolation, settings: SandboxSettings) -> None:
        self.isolation = isolation
        self.settings = settings
        self.jobs = 0
        self.broken = False
        self.preloaded: list[str] = []
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._reset_answer: dict[str, Any] | None = None
        """The server's reset report, when the job's last run brought it (see ``Execution.last``)."""

    @property
    def alive(self) -> bool:
        """Not broken, its first process (bubblewrap, or the ``docker run`` client, which exits with
        its container) still running, and its control socket quiet: an idle server says nothing,
        so a readable socket is its end closing. An idle sandbox killed from outside is not alive."""
        if self.broken or self._control is None or self._process is None or self._process.poll() is not None:
            return False
        readable, _, _ = select.select([self._control], [], [], 0)
        return not readable

    @property
    def scratch(self) -> str:
        """The programs' working directory, as they see it."""
        return self.isolation.scratch[0]

    def start(self) -> None:
        driver_args = [
            "--program-uid", str(self.isolation.program_uid),
            "--scratch", ",".join(self.isolation.scratch),
            "--kill-scope", self.isolation.kill_scope,
            "--preload", ",".join(self.settings.preload),
            "--ahead", str(CHILDREN_AHEAD),
        ]  # fmt: skip
        if self.isolation.check_ipc:
            driver_args.append("--check-ipc")
        try:
            self._process, self._control = self.isolation.launch(driver_args)
            self._control.settimeout(self.settings.start_timeout_s)
            ready, fds = wire.recv_message(self._control)
            self._control.settimeout(None)
        except (EOFError, OSError, ValueError, SandboxError) as exc:
            reason = self._stderr_tail() or getattr(exc, "message", None) or repr(exc)
            self.close()
            raise SandboxError(f"{self.isolation.backend} sandbox failed to start: {reason}") from None
        for fd in fds:
            os.close(fd)
        if ready.get("op") != "ready":
            self.close()
            raise SandboxError(f"sandbox server said {ready!r} instead of ready")
        self.preloaded = list(ready.get("preloaded", []))
        measure = getattr(self.isolation, "measure_baseline", None)
        if measure is not None:
            measure()

    def run(self, execution: Execution) -> RunResult:
        """Run one thing in this sandbox and judge it; sandbox failures become ``sandbox_error``."""
        if self._control is None or self.broken:
            raise SandboxError("sandbox is not running")
        limits = execution.limits
        try:
            if execution.kind != "write":  # writing files is the server's own work, under any limits
                self.isolation.apply(limits)
            oom_before = self.isolation.oom_kills()
        except OSError as exc:
            self.broken = True
            raise SandboxError(f"cannot set the sandbox's limits: {exc}") from exc
        writes_files = bool((execution.payload or {}).get("files"))
        names = ["stdin", "stdout", "stderr"] + (["record"] if execution.kind == "python" else [])
        names += ["setup"] if writes_files else []
        pipes = self._send_exec(execution, names)
        writes = {pipes["stdin"][1]: execution.stdin}
        if execution.payload is not None:
            writes[pipes["payload"][1]] = _payload_bytes(execution.payload)
        reads = {name: pipes[name][0] for name in names if name != "stdin"}
        caps = {"stdout+stderr": limits.max_output_bytes, "record": RECORD_CAP}
        pace = None
        if execution.pace_s is not None:
            pace = Pace("record", execution.pace_s, limits.max_output_bytes)
            caps = {"record": RECORD_CAP}
        try:
            seen = pump(
                self._control,
                writes,
                reads,
                timeout_s=limits.timeout_s,
                caps=caps,
                kill=self._kill_programs,
                pace=pace,
            )
        except OSError as exc:
            self.broken = True
            raise SandboxError(f"lost the run's pipes: {exc}") from exc
        if seen.server_lost:
            self.broken = True
        if execution.last:
            self._reset_answer = (seen.exited or {}).get("reset")
        if writes_files and bytes(seen.streams.get("setup", b"")) != b"ok" and not seen.timed_out:
            # only a child that wrote every file says so, before the program starts: not forgeable
            message = f"could not write the job's files: {bytes(seen.streams.get('stderr', b''))[-500:].decode(errors='replace')}"
            return sandbox_failure(message, **self.isolation.details())
        oom_after = self.isolation.oom_kills()
        if oom_before is None:  # a container: the server reads its own cgroup
            oom_before = (seen.exited or {}).get("oom_kills_before")
            oom_after = (seen.exited or {}).get("oom_kills")
        return judge(seen, limits, (oom_before, oom_after), self.isolation.details(), pace is not None)

    def open_run(self, execution: Execution) -> dict[str, int]:
        """Start a run that the caller drives itself (a session's kernel, which outlives any one call):
        the parent's ends of its pipes by name (``stdin`` to write; ``stdout``, ``stderr`` and, for
        Python, ``record`` to read). The caller closes them, reads the server's ``exited`` message on
        :attr:`control` when the run ends, and stops it with :meth:`kill_run`."""
        if self._control is None or self.broken:
            raise SandboxError("sandbox is not running")
        try:
            self.isolation.apply(execution.limits)
        except OSError as exc:
            self.broken = True
            raise SandboxError(f"cannot set the sandbox's limits: {exc}") from exc
        names = ["stdin", "stdout", "stderr"] + (["record"] if execution.kind == "python" else [])
        pipes = self._send_exec(execution, names)
        if execution.payload is not None:  # small (a kernel's source): fits the widened pipe at once
            os.write(pipes["payload"][1], _payload_bytes(execution.payload))
            os.close(pipes["payload"][1])
        return {name: pipes[name][1] if name == "stdin" else pipes[name][0] for name in names}

    @property
    def control(self) -> socket.socket | None:
        """The control socket to the server (for :meth:`open_run`'s caller, which reads ``exited`` on it)."""
        return self._control

    def kill_run(self) -> None:
        """Kill the running programs from outside and tell the server to (it then reports ``exited``)."""
        self._kill_programs()

    def _send_exec(self, execution: Execution, names: list[str]) -> dict[str, tuple[int, int]]:
        """Hand the server one run with fresh pipes of these names (and the payload pipe); the pipes."""
        limits = execution.limits
        pipes = {name: os.pipe() for name in names}
        if execution.payload is not None:
            pipes["payload"] = os.pipe()
            _widen(pipes["payload"][1])
        # the child gets stdin's and payload's read ends, the other pipes' write ends
        theirs = [pipes[n][0] if n in ("stdin", "payload") else pipes[n][1] for n in pipes]
        header = {
            "op": "exec",
            "kind": execution.kind,
            "argv": list(execution.argv),
            "env": execution.env,
            "limits": limits.rlimits(self.isolation.memory_limit == "rlimit", self.isolation.other_tasks()),
            "fds": list(pipes),
            "reset": execution.last,
        }
        try:
            wire.send_message(self._control, header, theirs)  # type: ignore[arg-type]
        except OSError as exc:
            for read, write in pipes.values():
                os.close(read)
                os.close(write)
            self.broken = True
            raise SandboxError(f"the sandbox server is gone: {exc}") from exc
        for fd in theirs:
            os.close(fd)
        return pipes

    def reset(self) -> bool:
        """End a job; True if the sandbox is clean enough to serve the next one."""
        if self._control is None or self.broken:
            return False
        self.jobs += 1
        answer, self._reset_answer = self._reset_answer, None
        if answer is None:  # no run of the job asked for the reset: ask now
            try:
                self._control.settimeout(30)
                wire.send_message(self._control, {"op": "reset"})
                answer, fds = wire.recv_message(self._control)
                self._control.settimeout(None)
            except (EOFError, OSError, ValueError):
                self.broken = True
                return False
            for fd in fds:
                os.close(fd)
        if answer.get("op") != "reset" or answer.get("dirty"):
            self.broken = True
            return False
        return self.jobs < self.settings.recycle_after

    def close(self) -> None:
        """Stop the server (it kills its programs when the socket closes), then tear down the walls."""
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._process is not None:
            try:
                self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill_group()
            if self._process.stderr is not None:
                self._process.stderr.close()
            self._process = None
        self.isolation.destroy()

    def _kill_programs(self) -> None:
        """The wall clock or an output cap ran out: kill from outside, and tell the server too."""
        self.isolation.kill_programs()
        if self._control is not None:
            try:
                wire.send_message(self._control, {"op": "kill"})
            except OSError:
                self.broken = True

    def _kill_group(self) -> None:
        assert self._process is not None
        try:
            os.killpg(self._process.pid, 9)
        except ProcessLookupError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def _stderr_tail(self) -> str:
        process = self._process
        if process is None or process.stderr is None:
            return ""
        try:
            process.wait(timeout=self.settings.start_timeout_s)
        except subprocess.TimeoutExpired:
            return ""
        return process.stderr.read()[-2000:].decode(errors="replace").strip()
