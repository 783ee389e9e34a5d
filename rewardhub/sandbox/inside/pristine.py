"""What the trusted code inside the sandbox calls once a program runs in its process, taken before
any program ran.

A Python program runs in the process its harness runs in (a fork of the server), so everything the
harness would look up at the end of a run, the program can have rebound first: SandboxFusion's own
anti-hack header sets ``os._exit``, ``sys.exit`` and ``exit`` to ``None`` before a dataset's code;
others replace ``signal.signal``, ``atexit.register``, ``json.dumps`` or a built-in. The harness
must then still finish the run the way ``python main.py`` would. So what it needs afterwards is
captured here, when the server starts:

- :data:`BUILTINS`, a copy of the built-ins: each module of the harness makes it its own
  ``__builtins__`` (:func:`seal`), so a program that rebinds ``builtins.isinstance`` or
  ``builtins.SystemExit`` changes its own look-ups, never the harness's;
- the few system calls and interpreter hooks used after the program: leaving the process, writing
  and closing a descriptor, joining threads, running ``atexit`` functions, displaying a traceback.

And no frame or file of the harness reaches the program's output: :func:`display` prints a
traceback as Python's own hook does, without the harness's frames (at the bottom, between a test
and the program's function, or in a chained exception); :func:`forget_harness` takes the harness's
modules out of ``sys.modules`` and its folder off ``sys.path`` before the program runs, so a
program's own ``wire.py`` or ``harness.py`` is the one it imports.

What a program can still do is reach these objects on purpose (through ``gc`` or a frame's
globals) and break its own run: that changes nothing outside its process and can only fail it.
Its own stack, if it prints it (``traceback.print_stack()``), shows the harness's frames below its
module, as ``python -m`` shows runpy's.

Standard library only.
"""

from __future__ import annotations

import atexit
import builtins
import os
import sys
import threading
from types import TracebackType
from typing import Any

__all__ = [
    "BUILTINS",
    "HARNESS_DIR",
    "close",
    "display",
    "exit_now",
    "forget_harness",
    "join_threads",
    "ours",
    "remember_harness",
    "report_uncaught",
    "run_exitfuncs",
    "seal",
    "write",
]

BUILTINS: dict[str, Any] = dict(vars(builtins))
"""The built-ins as they were when the server started."""
__builtins__ = BUILTINS  # this module's own functions too (see seal)

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
"""The folder of the harness's own files (mounted read-only inside the sandbox)."""

exit_now = os._exit
write = os.write
close = os.close
run_exitfuncs = atexit._run_exitfuncs
join_threads = threading._shutdown  # type: ignore[attr-defined]
_default_hook = sys.__excepthook__  # Python's own display of an uncaught exception (in C)


def seal(namespace: dict[str, Any]) -> None:
    """Give a module of the harness the captured built-ins (call it before the module's ``def``s:
    a function keeps the ``__builtins__`` its module had when it was defined)."""
    namespace["__builtins__"] = BUILTINS


def ours(filename: str) -> bool:
    """Whether a frame's file is one of the harness's."""
    return filename.startswith(HARNESS_DIR + os.sep)


def display(exc: BaseException) -> None:
    """Print ``exc`` as Python prints an uncaught exception, with no frame of the harness in it."""
    try:
        _default_hook(type(exc), exc, _without_harness(exc))
    except BaseException:  # sys.stderr is gone or broken: Python would print nothing either
        pass


def report_uncaught(exc: BaseException) -> None:
    """What Python does with an exception that ends ``__main__``: call ``sys.excepthook`` (the
    program's own, if it set one) with the traceback below the harness, and fall back as Python does."""
    tb = _without_harness(exc)
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        _say("sys.excepthook is missing\n")
        display(exc)
        return
    try:
        hook(type(exc), exc, tb)
    except BaseException as failed:
        _say("Error in sys.excepthook:\n")
        display(failed)
        _say("\nOriginal exception was:\n")
        display(exc)


_harness_modules: list[str] = []


def remember_harness() -> None:
    """Note which of ``sys.modules`` are the harness's, once in the server: a run's child then drops
    them by name (looking through every module there would write to hundreds of shared pages)."""
    _harness_modules[:] = [name for name, module in sys.modules.items() if ours(getattr(module, "__file__", "") or "")]


def forget_harness() -> None:
    """Take the harness out of the program's sight: its modules out of ``sys.modules``, its folder
    off ``sys.path``. Its functions keep their own globals and go on working."""
    if not _harness_modules:
        remember_harness()
    for name in _harness_modules:
        sys.modules.pop(name, None)
    sys.path[:] = [entry for entry in sys.path if entry != HARNESS_DIR]


def _without_harness(exc: BaseException) -> TracebackType | None:
    """``exc``'s traceback (and those of the exceptions chained to it) relinked without our frames."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _filtered(current.__traceback__)
        pending += [current.__cause__, current.__context__]
    return exc.__traceback__


def _filtered(tb: TracebackType | None) -> TracebackType | None:
    kept = []
    while tb is not None:
        if not ours(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    for earlier, later in zip(kept, kept[1:], strict=False):
        earlier.tb_next = later
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def _say(text: str) -> None:
    stream = sys.stderr
    try:
        if stream is not None:
            stream.write(text)
    except BaseException:
        pass
