"""The parent's side of one run: feed its input, read its output as it streams, keep the clock.

One ``select`` loop over the run's pipes and the control socket, in the trusted parent. Output is
counted while it arrives, so a program printing forever is stopped at the cap, not after it has
filled memory; the wall clock is kept here, outside the sandbox, and when it runs out ``kill`` is
called, which kills the programs from outside. The loop ends when the server reports the run
finished (it does so only after every process of the program is gone) and the pipes are drained.
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardhub.sandbox.inside import wire

__all__ = ["Pumped", "pump"]

KILL_GRACE_S = 5.0
"""How long the server may take to report a killed run before the sandbox is torn down."""
DRAIN_S = 2.0
"""How long pipes may stay open after the run ended (every writer is dead by then)."""
CHUNK = 1 << 16
WRITE_CHUNK = 1 << 20
"""Writes go out in up to this much at a time (the payload pipe is widened to match)."""


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
) -> Pumped:
    """Run the loop until the run has ended; closes every descriptor in ``writes`` and ``reads``.

    ``caps`` maps groups of read streams to a byte limit: ``{"stdout+stderr": 1 << 20}``.
    """
    seen = Pumped(streams={name: bytearray() for name in reads})
    selector = selectors.DefaultSelector()
    pending = {fd: memoryview(data) for fd, data in writes.items()}
    try:
        for fd in writes:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_WRITE, ("write", fd))
        for name, fd in reads.items():
            selector.register(fd, selectors.EVENT_READ, ("read", name))
        selector.register(control, selectors.EVENT_READ, ("control", None))
        _loop(seen, selector, control, pending, caps, timeout_s, kill)
    finally:
        for key in list(selector.get_map().values()):
            if key.fileobj is not control:
                _close(key.fd)
        selector.close()
    return seen


def _loop(
    seen: Pumped,
    selector: selectors.BaseSelector,
    control: socket.socket,
    pending: dict[int, memoryview],
    caps: dict[str, int],
    timeout_s: float,
    kill: Callable[[], None],
) -> None:
    start = time.monotonic()
    deadline = start + timeout_s
    give_up: float | None = None  # after a kill: when to stop waiting for the server
    drained_by: float | None = None  # after the exit: when to stop waiting for EOF

    def stop(reason: str) -> None:
        nonlocal give_up
        setattr(seen, reason, True)
        if give_up is None:
            give_up = time.monotonic() + KILL_GRACE_S
            kill()

    while True:
        streams_open = [key for key in selector.get_map().values() if key.data[0] in ("read", "write")]
        if seen.exited is not None and not streams_open:
            break
        now = time.monotonic()
        if seen.exited is None and give_up is None and now >= deadline:
            seen.elapsed_s = now - start
            stop("timed_out")
        if seen.exited is None and give_up is not None and now >= give_up:
            seen.server_lost = True
            break
        if drained_by is not None and now >= drained_by:
            break
        wake = min(t for t in (deadline if give_up is None else give_up, drained_by) if t is not None)
        for key, _mask in selector.select(max(0.0, wake - now)):
            kind, what = key.data
            if kind == "control":
                if not _on_control(seen, control, selector):
                    return
                if seen.exited is not None:
                    if not seen.timed_out:
                        seen.elapsed_s = time.monotonic() - start
                    drained_by = time.monotonic() + DRAIN_S
            elif kind == "write":
                _on_writable(key.fd, pending, selector)
            else:
                _on_readable(seen, key.fd, what, selector)
                for group, limit in caps.items():
                    names = group.split("+")
                    if sum(len(seen.streams.get(name, b"")) for name in names) > limit:
                        for other in list(selector.get_map().values()):
                            if other.data[0] == "read" and other.data[1] in names:
                                selector.unregister(other.fd)
                                _close(other.fd)
                        stop("output_limited")


def _on_control(seen: Pumped, control: socket.socket, selector: selectors.BaseSelector) -> bool:
    try:
        message, fds = wire.recv_message(control)
    except (EOFError, OSError, ValueError):
        seen.server_lost = True
        return False
    for fd in fds:
        _close(fd)
    if message.get("op") == "exited":
        seen.exited = message
        selector.unregister(control)
    return True


def _on_writable(fd: int, pending: dict[int, memoryview], selector: selectors.BaseSelector) -> None:
    data = pending[fd]
    try:
        written = os.write(fd, data[:WRITE_CHUNK]) if data else 0
    except BlockingIOError:
        return
    except OSError:  # the reader is gone (the program exited or closed stdin): the rest is moot
        written = len(data)
    pending[fd] = data = data[written:]
    if not data:
        selector.unregister(fd)
        _close(fd)


def _on_readable(seen: Pumped, fd: int, name: str, selector: selectors.BaseSelector) -> None:
    try:
        chunk = os.read(fd, CHUNK)
    except BlockingIOError:
        return
    except OSError:
        chunk = b""
    if chunk:
        seen.streams[name] += chunk
    else:
        selector.unregister(fd)
        _close(fd)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
