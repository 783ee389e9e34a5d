"""The fork server's child, between ``fork()`` and the program: becoming the program.

The server forks this child ahead of need (:func:`wait_for_run`), so a run never waits for a
fork. Before the run is known: drop the control socket; a session of its own; no core files;
fresh random state. Then it waits for the run's message and pipes on a socket only it and the
server hold. Once the run is there, each step before anything of the submission runs: an OOM
score that makes the program, not its server, the first to go; read the code and test from the
private payload pipe (so the server never held them); the run's pipes on fds 0-4 and nothing else open;
the job's files; rlimits; the program's uid for good (which clears every capability); the scratch
folder as working directory. Then ``exec`` a native program, or run Python in place (:mod:`harness`).

Standard library only.
"""

from __future__ import annotations

import base64
import json
import marshal
import os
import resource
import shutil
import signal
import socket
from typing import Any

try:
    from . import collect, harness, pristine, wire
except ImportError:  # run as a plain script inside the sandbox
    import collect  # type: ignore[no-redef]
    import harness  # type: ignore[no-redef]
    import pristine  # type: ignore[no-redef]
    import wire  # type: ignore[no-redef]

pristine.seal(globals())

__all__ = ["WRITE_FAILED", "become_program", "drop_to", "wait_for_run"]

SETUP_FD = 4
"""Where the child confirms the job's files are written; closed before the program starts."""
WRITE_FAILED = 124
"""Exit status of a child that could not write the job's files. The parent does not trust the status
(a program can exit 124 too): it trusts the ``setup`` pipe, which only a successful write fills."""

MAX_FD = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 0 else 1 << 20
"""Above any descriptor the server holds (it never changes its own limit)."""

_RLIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "address_space": resource.RLIMIT_AS,
}


def wait_for_run(sock: socket.socket, server: Any) -> int:
    """Get ready ahead of need, then wait on ``sock`` for the run this child becomes; its exit status.

    What does not depend on the run is done before it is known: no control socket, a session of
    its own, no core files, fresh random state. An end of file instead of a run means the server
    retired this child.
    """
    server.control.close()
    os.setsid()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    harness.reseed()
    try:
        message, fds = wire.recv_run(sock)
    except (EOFError, OSError, ValueError):
        return 0
    sock.close()
    return become_program(message, fds, server)


def become_program(message: dict[str, Any], fds: list[int], server: Any) -> int:
    """Turn this prepared fork of ``server`` into the program (or a file writer); the exit status."""
    _set_oom_score(1000)  # under memory pressure the program goes first, never its server (nor the next child)
    named = dict(zip(message["fds"], fds, strict=True))
    payload = _read_payload(named.pop("payload")) if "payload" in named else {}
    _install_fds(named)
    kind = message["kind"]
    if payload.get("files") and _write_files(server.scratch, payload["files"]) != 0:
        return WRITE_FAILED
    if "setup" in named:  # "the files are there", said (and closed) before any of the program runs
        os.write(SETUP_FD, b"ok")
        os.close(SETUP_FD)
    if kind == "write":
        return 0
    _set_limits(message.get("limits", {}))
    if server.can_change_uid:
        drop_to(server.program_uid)
    os.chdir(server.scratch[0])
    if kind == "fetch" and "collect" in payload:  # a session's declared artifacts (:mod:`collect`)
        return collect.collect(server.scratch[0], payload["collect"])
    if kind == "fetch":
        return _fetch(server.scratch, payload.get("paths", []), int(payload.get("max_bytes", 0)))
    if kind == "argv":
        for number in (signal.SIGPIPE, signal.SIGXFSZ):  # what a shell would give a native program
            signal.signal(number, signal.SIG_DFL)
        argv = message["argv"]
        env = {**os.environ, **message.get("env", {})}
        try:
            os.execve(shutil.which(argv[0], path=env.get("PATH")) or argv[0], argv, env)
        except OSError as exc:
            os.write(2, f"cannot execute {argv[0]}: {exc.strerror}\n".encode())
            return 127
    if kind == "python" and payload.get("mode") == "native_batch":  # a coordinator for a native program's cases
        return harness.run_native_batch(payload)
    if kind == "python":
        return harness.run_python(payload, server.builtins_snapshot)
    raise ValueError(f"unknown kind {kind!r}")


def _read_payload(fd: int) -> dict[str, Any]:
    """The run's code, files and test, in marshal: written by the trusted parent alone (this pipe's
    write end never enters the sandbox), so marshal's one C call is safe here."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    os.close(fd)
    return marshal.loads(b"".join(chunks))


def _install_fds(named: dict[str, int]) -> None:
    """stdin/stdout/stderr on 0-2, the record channel on 3, setup on 4, and nothing else open."""
    high = {name: os.dup(fd) for name, fd in named.items()}
    for fd in named.values():
        os.close(fd)
    targets = {"stdin": 0, "stdout": 1, "stderr": 2, "record": harness.RECORD_FD, "setup": SETUP_FD}
    for name, fd in high.items():
        os.dup2(fd, targets[name], inheritable=name not in ("record", "setup"))
    keep = {targets[name] for name in high}
    for fd in (harness.RECORD_FD, SETUP_FD):
        if fd not in keep:
            _close(fd)
    os.closerange(SETUP_FD + 1, MAX_FD)  # one close_range(2) call, whatever the server had open


def _set_limits(limits: dict[str, int | None]) -> None:
    for name, value in limits.items():
        if value is None:
            continue
        soft = hard = int(value)
        if name == "cpu_s":
            hard = soft + 1  # SIGXCPU first, SIGKILL a second later
        resource.setrlimit(_RLIMITS[name], (soft, hard))


def _set_oom_score(score: int) -> None:
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, str(score).encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def drop_to(uid: int) -> None:
    """Become ``uid`` for good: real, effective and saved ids, no groups; capabilities go with it."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _write_files(roots: list[str], files: dict[str, Any]) -> int:
    """Write the run's input files, read-only, as the server's user (the program cannot change them).

    A name is relative to the working directory (``roots[0]``) or absolute, and either way lands in
    one of the job's writable folders (``roots``: /tmp, /dev/shm, /mnt in a sandbox), with every
    link in the way followed: ``..``, or a link an earlier run of the job left pointing elsewhere,
    is refused. A file is text, or ``{"base64": ..., "executable": bool}`` for bytes (binary
    inputs, a cached build's program).
    """
    os.umask(0o022)
    for name, content in files.items():
        executable = False
        if isinstance(content, dict):
            data, executable = base64.b64decode(content["base64"]), bool(content.get("executable"))
        else:
            data = content.encode("utf-8")
        path = os.path.join(roots[0], name)  # an absolute name stays itself
        if "/" not in name and name not in ("", ".", "..") and _create(path, data, executable):
            continue  # a new name right in the working directory: created there, never through a link
        if not _plain(name) or not _within(path, roots, strictly=True):
            where = ", ".join(roots)
            os.write(2, f"refusing to write outside the job's writable folders ({where}): {name!r}\n".encode())
            return 1
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:  # an earlier run's (read-only) input: replaced, never written through
            os.unlink(path)
        except FileNotFoundError:
            pass
        if not _create(path, data, executable):
            raise FileExistsError(f"{name!r} appeared while it was being written")
    return 0


def _plain(name: str) -> bool:
    """No ``..``, no NUL, not empty: a name that means one place, before links are followed."""
    return bool(name) and "\0" not in name and ".." not in name.split("/")


def _within(path: str, roots: list[str], strictly: bool = False) -> bool:
    """Whether ``path``, every link in it followed, lies in one of ``roots`` (``strictly``: below it)."""
    real = os.path.realpath(path)
    for root in roots:
        top = os.path.realpath(root)
        if real.startswith(top.rstrip(os.sep) + os.sep) or (real == top and not strictly):
            return True
    return False


def _create(path: str, data: bytes, executable: bool) -> bool:
    """Create ``path`` with its final mode and write ``data``; False if something is there already."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o555 if executable else 0o444)
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return True


def _fetch(roots: list[str], paths: list[str], max_bytes: int) -> int:
    """Print ``{"files": {name: {"base64", "executable"}}}`` for the files (folders: every file in
    them) that exist at ``paths``, as the program's user: nothing it could not have printed itself.

    A path is relative to the working directory or absolute, as in :func:`_write_files`; a file is
    named as it was asked for (a folder's files: below the name asked for). Only what lies in the
    job's writable folders, every link followed, comes back: a link the program left pointing at
    /etc is not a way to read the system out.
    """
    found: dict[str, dict[str, Any]] = {}
    total = 0
    for asked in paths:
        top = os.path.join(roots[0], asked)
        if not _plain(asked) or not _within(top, roots):
            continue
        if os.path.isdir(top) and not os.path.islink(top):
            names = [os.path.join(folder, name) for folder, _, files in os.walk(top) for name in files]
        else:
            names = [top]
        for name in names:
            try:
                if not os.path.isfile(name) or not _within(name, roots, strictly=True):
                    continue
                with open(name, "rb") as handle:
                    data = handle.read(max_bytes - total + 1)
                mode = os.stat(name).st_mode
            except OSError:
                continue
            total += len(data)
            if total > max_bytes:
                os.write(2, f"the files to fetch exceed {max_bytes} bytes\n".encode())
                return 1
            entry = {"base64": base64.b64encode(data).decode("ascii"), "executable": bool(mode & 0o111)}
            key = asked if name == top else os.path.join(asked, os.path.relpath(name, top))
            found[os.path.normpath(key)] = entry
    view = memoryview(json.dumps({"files": found}).encode())
    while view:
        view = view[os.write(1, view[: 1 << 16]) :]
    return 0


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
