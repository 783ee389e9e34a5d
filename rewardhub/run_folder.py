"""One folder for every temporary file of a running service, removed however the service ends.

``rewardhub serve`` makes ``<TMPDIR>/rewardhub-run-XXXXXXXX`` and points ``TMPDIR`` (and
:mod:`tempfile`) at it, for itself and every process it starts: the fork servers' sockets
(``multiprocessing``'s ``pymp-*`` folders), the job store and metrics that API workers share,
compilers' scratch files, vLLM's IPC sockets. A clean stop removes the folder. Caches that default
to the temporary folder go with it (torch's ``torchinductor_<user>``): set their own variable
(``TORCHINDUCTOR_CACHE_DIR``) to keep one across runs.

A process killed with SIGKILL runs no code, so the folder carries a lock instead: the serve
process holds an ``flock`` on it for its whole life, the kernel drops that lock when the process
ends, however it ends, and every ``rewardhub serve`` that starts first removes each
``rewardhub-run-*`` folder whose lock it can take (:func:`sweep`). A live service's folder is never
touched, since its lock is held, and a reused process id cannot fool a lock. A new folder is locked
under a name :func:`sweep` ignores and renamed only then, so a sweep never sees it unlocked.

Every path under the folder is 23 characters longer, and a unix socket's path may not pass 107
bytes: under a ``TMPDIR`` too long to leave room for the fork server's socket, the folder is made
in /tmp instead, with a warning (the socket would not bind at all).

Why a folder and not memory: the fork server listens on a unix socket path, and API workers share
a sqlite job store and prometheus' multiprocess files, all of which need paths. A tmpfs in a
private mount namespace would vanish by itself, but needs privileges the service does not
otherwise need. What a verifier builds for itself lives in memory (the ``sql`` verifier's inline
databases), because a Celery worker has no such folder.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
from multiprocessing import util
from pathlib import Path

__all__ = ["PREFIX", "enter_run_folder", "sweep"]

PREFIX = "rewardhub-run-"
_STAGING = "rewardhub-new-"
_SOCKET_ROOM = len("/rewardhub-run-12345678/pymp-12345678/listener-12345678")
_MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes, the last one a NUL

log = logging.getLogger(__name__)


def enter_run_folder(parent: str | None = None) -> Path:
    """Make this process's run folder under ``parent`` (the temporary folder), point ``TMPDIR`` and
    :mod:`tempfile` at it, and have it removed when this process exits; its path.

    Removed by a ``multiprocessing`` finalizer that runs after multiprocessing's own (exit
    priority -100), which removes the fork server's folder inside this one and reports that folder
    as an error when it is gone already. Until then the lock is held, so no sweep takes it.
    """
    base = Path(parent or tempfile.gettempdir())
    if len(os.fsencode(base)) + _SOCKET_ROOM > _MAX_SOCKET_PATH:
        log.warning("TMPDIR %s leaves no room for a unix socket's path under it: the run folder is in /tmp", base)
        base = Path("/tmp")
    sweep(base)
    staging = tempfile.mkdtemp(prefix=_STAGING, dir=base)
    fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)  # not inherited: only this process holds the lock
    fcntl.flock(fd, fcntl.LOCK_EX)
    path = base / (PREFIX + Path(staging).name.removeprefix(_STAGING))
    os.rename(staging, path)  # the lock is on the folder itself, whatever its name
    os.environ["TMPDIR"] = tempfile.tempdir = str(path)
    util.Finalize(None, _remove, args=(path, fd), exitpriority=-200)
    return path


def _remove(path: Path, fd: int) -> None:
    shutil.rmtree(path, ignore_errors=True)
    os.close(fd)


def sweep(parent: Path) -> list[Path]:
    """Remove each run folder under ``parent`` that no live service holds; the folders removed."""
    removed = []
    for folder in parent.glob(PREFIX + "*"):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone already, not a folder, or not ours to open
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: a live service's
        else:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    return removed
