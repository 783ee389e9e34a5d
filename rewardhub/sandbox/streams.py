"""The parent's side of one run: feed its input, read its output as it streams, keep the clock.

One ``poll`` loop over the run's pipes and the control socket, in the trusted parent. Output is
counted while it arrives, so a program printing forever is stopped at the cap, not after it has
filled memory; the wall clock is kept here, outside the sandbox, and when it runs out ``kill`` is
called, which kills the programs from outside. The loop ends when the server reports the run
finished (it does so only after every process of the program is gone) and the pipes are drained.

Input that fits in its pipe (the usual test's stdin, the payload in its widened pipe) is written
before the loop starts. For the first ``QUIET_S`` the loop waits only for the server's report (and
for room to write more input): a short run's output sits in its pipes until the report comes, then
is read in one go, one wakeup instead of one per write and per closed pipe. A run that is still
going after that is read as it streams; one that fills a pipe in the meantime waits at most that long.

A **paced** run (:class:`Pace`) reports its tests one after another, a line each on one stream: each
test gets its own clock, from the line before it, and its own output cap, so the parent keeps a
series' clocks without a coordinator inside the sandbox (:mod:`rewardhub.sandbox.batch`).
"""

from __future__ import annotations

import math
import os
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardhub.sandbox.inside import wire

__all__ = ["Pace", "Pumped", "pump"]

KILL_GRACE_S = 5.0
"""How long the server may take to report a killed run before the sandbox is torn down."""
DRAIN_S = 2.0
"""How long pipes may stay open after the run ended (every writer is dead by then)."""
CHUNK = 1 << 16
WRITE_CHUNK = 1 << 20
"""Writes go out in up to this much at a time (the payload pipe is widened to match)."""
QUIET_S = 0.01
"""How long the loop leaves the output pipes alone, waiting for the run to end (see above)."""


TAIL = 1 << 16
"""What a paced run keeps of its other streams at each line: their ends (a failing test's stderr)."""


@dataclass(frozen=True)
class Pace:
    """A run whose tests report one at a time, one line each on ``stream``: each test may take
    ``each_s`` from the line before it (the first from the start) and write ``cap`` bytes on the
    other streams; the run's own clock (``timeout_s``) still bounds them all."""

    stream: str
    each_s: float
    cap: int


@dataclass
class Pumped:
    """What the parent saw of one run (raw: :mod:`rewardhub.sandbox.verdicts` judges it)."""

    streams: dict[str, bytearray] = field(default_factory=dict)
    exited: dict[str, Any] | None = None
    timed_out: bool = False
    output_limited: bool = False
    server_lost: bool = False
    """The server stopped answering (crashed, or did not report a killed run): no exit status."""
    elapsed_s: float = 0.0


def pump(
    control: socket.socket,
    writes: dict[int, bytes],
    reads: dict[str, int],
    timeout_s: float,
    caps: dict[str, int],
    kill: Callable[[], None],
    pace: Pace | None = None,
) -> Pumped:
    """Run the loop until the run has ended; closes every descriptor in ``writes`` and ``reads``.

    ``caps`` maps groups of read streams to a byte limit: ``{"stdout+stderr": 1 << 20}``. With
    ``pace``, the streams other than its own count against ``pace.cap`` from each line on.
    """
    run = _Pump(control, reads, caps, kill, pace)
    try:
        for fd, data in writes.items():
            run.feed(fd, data)
        run.loop(timeout_s)
    finally:
        for fd in list(run.open):
            run.close(fd)
    return run.seen


class _Pump:
    """The state of one loop: which descriptors are open, what is left to write, what was read."""

    def __init__(
        self,
        control: socket.socket,
        reads: dict[str, int],
        caps: dict[str, int],
        kill: Callable[[], None],
        pace: Pace | None = None,
    ) -> None:
        self.seen = Pumped(streams={name: bytearray() for name in reads})
        self.pace = pace
        self.paced_since = 0.0
        """When the test now running began: the run's start (set by :meth:`loop`), then each line's arrival."""
        self.paced_output = 0
        """Bytes of the other streams since that line (a paced run's per-test cap)."""
        self.control = control
        self.kill = kill
        self.poller = select.poll()
        self.open: dict[int, str | None] = {}
        """Every run descriptor not closed yet: a read stream's name, or None for a write."""
        self.pending: dict[int, memoryview] = {}
        groups = [(group.split("+"), limit) for group, limit in caps.items()]
        self.caps = {name: [(names, limit) for names, limit in groups if name in names] for name in reads}
        """For each stream, the capped groups it counts in."""
        for name, fd in reads.items():
            self.open[fd] = name
        self.watching = False
        """Whether the output pipes are polled yet (not during the first ``QUIET_S``)."""
        self.poller.register(control, select.POLLIN)
        self.give_up: float | None = None  # after a kill: when to stop waiting for the server

    def feed(self, fd: int, data: bytes) -> None:
        """Write what fits now; the rest is written as the reader makes room."""
        self.open[fd] = None
        os.set_blocking(fd, False)
        self.pending[fd] = memoryview(data)
        if not self._write(fd):
            self.poller.register(fd, select.POLLOUT)

    def loop(self, timeout_s: float) -> None:
        seen = self.seen
        start = time.monotonic()
        deadline = start + timeout_s
        drained_by: float | None = None  # after the exit: when to stop waiting for EOF
        quiet_until = start + QUIET_S
        control_fd = self.control.fileno()
        self.paced_since = start
        while seen.exited is None or self.open:
            now = time.monotonic()
            if not self.watching and (seen.exited is not None or now >= quiet_until):
                self._watch_outputs()
            if self.pace is not None:
                deadline = min(start + timeout_s, self.paced_since + self.pace.each_s)
            if seen.exited is None and self.give_up is None and now >= deadline:
                seen.elapsed_s = now - start
                self._stop("timed_out")
            if seen.exited is None and self.give_up is not None and now >= self.give_up:
                seen.server_lost = True
                return
            if drained_by is not None and now >= drained_by:
                return
            wake = drained_by if drained_by is not None else (deadline if self.give_up is None else self.give_up)
            if not self.watching:
                wake = min(wake, quiet_until)
            for fd, _events in self.poller.poll(max(0, math.ceil((wake - now) * 1000))):
                if fd == control_fd:
                    if not self._on_control():
                        return
                    if seen.exited is not None:
                        if not seen.timed_out:
                            seen.elapsed_s = time.monotonic() - start
                            # learned at or past the deadline: had this loop woken on time its kill
                            # would have said timeout, so a loaded host cannot turn one into "ok"
                            seen.timed_out = self.pace is None and seen.elapsed_s >= timeout_s
                        drained_by = time.monotonic() + DRAIN_S
                        self._drain()
                elif fd in self.pending:
                    self._write(fd)
                elif fd in self.open:
                    self._read(fd)

    def _drain(self) -> None:
        """The run is over (the server reports only once every program process is gone): read what
        the pipes hold without waiting for them, down to their ends of file where they came."""
        for fd, name in list(self.open.items()):
            if name is not None:
                os.set_blocking(fd, False)
                while fd in self.open and self._read(fd):
                    pass

    def _watch_outputs(self) -> None:
        self.watching = True
        for fd, name in self.open.items():
            if name is not None:
                self.poller.register(fd, select.POLLIN)

    def close(self, fd: int) -> None:
        """Close a run descriptor once (a number closed twice may already be another thread's)."""
        if self.open.pop(fd, "closed") != "closed":
            self.pending.pop(fd, None)
            try:
                self.poller.unregister(fd)
            except KeyError:
                pass
            _close(fd)

    def _stop(self, reason: str) -> None:
        setattr(self.seen, reason, True)
        if self.give_up is None:
            self.give_up = time.monotonic() + KILL_GRACE_S
            self.kill()

    def _on_control(self) -> bool:
        try:
            message, fds = wire.recv_message(self.control)
        except (EOFError, OSError, ValueError):
            self.seen.server_lost = True
            return False
        for fd in fds:
            _close(fd)
        if message.get("op") == "exited":
            self.seen.exited = message
            self.poller.unregister(self.control)
        return True

    def _write(self, fd: int) -> bool:
        """Write until the pipe is full; True once everything is written (or the reader is gone) and fd closed."""
        data = self.pending[fd]
        try:
            while data:
                data = data[os.write(fd, data[:WRITE_CHUNK]) :]
        except BlockingIOError:
            pass
        except OSError:  # the reader is gone (the program exited or closed stdin): the rest is moot
            data = data[:0]
        self.pending[fd] = data
        if data:
            return False
        self.close(fd)
        return True

    def _read(self, fd: int) -> bool:
        """Read one chunk; False once there is nothing to read right now (or the stream ended)."""
        name = self.open[fd]
        assert name is not None
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self.close(fd)
            return False
        streams = self.seen.streams
        streams[name] += chunk
        if self.pace is not None and self._paced(name, chunk):
            return True
        for names, limit in self.caps[name]:
            if sum(len(streams[other]) for other in names if other in streams) > limit:
                for other, stream_name in list(self.open.items()):
                    if stream_name in names:
                        self.close(other)
                self._stop("output_limited")
        return True

    def _paced(self, name: str, chunk: bytes) -> bool:
        """Keep a paced run's per-test clock and cap (True: it was stopped for output)."""
        assert self.pace is not None
        if name == self.pace.stream:
            if b"\n" in chunk:  # a test ended: the next one's clock and cap start now
                self.paced_since = time.monotonic()
                self.paced_output = 0
                for other, stream in self.seen.streams.items():
                    if other != name:
                        del stream[:-TAIL]
            return False
        self.paced_output += len(chunk)
        if self.paced_output > self.pace.cap and self.seen.exited is None:
            for fd, stream_name in list(self.open.items()):
                if stream_name is not None and stream_name != self.pace.stream:
                    self.close(fd)
            self._stop("output_limited")
            return True
        return False


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
