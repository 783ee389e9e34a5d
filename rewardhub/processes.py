"""Worker processes from a fork server, without re-running the caller's ``__main__``; and child
processes that die with their parent.

``multiprocessing``'s fork server (like spawn) re-imports the parent's main script in every child,
so a trainer script that starts an embedded service at top level, without an
``if __name__ == "__main__"`` guard, would recursively start services in its own workers. Our
workers need nothing from ``__main__`` (their target lives in this package), so this process
class drops the main-module entries from the preparation data; everything else is the standard
fork-server launch. It imports nothing of ours: the local pool's workers and the trainer's
reward child (a caller) both use it.

A process killed with SIGKILL runs no clean-up, so its children must be told by the kernel:
:func:`die_with_parent` (``rewardhub serve`` started by a trainer; each API worker of
``rewardhub serve --api-workers N`` under its supervisor).
"""

from __future__ import annotations

import ctypes
import io
import os
import sys
from collections.abc import Callable
from multiprocessing import forkserver, popen_forkserver, process, reduction, spawn, util
from multiprocessing.context import set_spawning_popen

__all__ = ["WorkerProcess", "die_with_parent"]


_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")


class _Popen(popen_forkserver.Popen):
    def _launch(self, process_obj: process.BaseProcess) -> None:  # mirrors popen_forkserver.Popen._launch
        prep_data = spawn.get_preparation_data(process_obj._name)  # type: ignore[attr-defined]
        for key in _MAIN_KEYS:
            prep_data.pop(key, None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class WorkerProcess(process.BaseProcess):
    """A ``multiprocessing`` process started by the fork server, without the caller's ``__main__``."""

    _start_method = "forkserver"

    @staticmethod
    def _Popen(process_obj: process.BaseProcess) -> _Popen:
        return _Popen(process_obj)


_PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int, parent: int) -> Callable[[], None] | None:
    """A hook (Linux; None elsewhere) that has the kernel send the calling process ``signum`` when
    its parent dies, and ends it at once if ``parent`` is no longer its parent (it died before the
    hook ran).

    The kernel ties the signal to the *thread* that started the child: start it from a thread that
    lives as long as the parent should. ``prctl`` is looked up here, so the hook itself makes two
    system calls (fit for a pre-exec hook, between fork and exec).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:
            os._exit(1)

    return hook
