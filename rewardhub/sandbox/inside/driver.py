"""The fork server: the trusted, long-lived process at the root of a warm sandbox.

Started once per sandbox (inside bubblewrap, a container, or bare for the unsafe backend) as::

    python -I -B driver.py --control-fd 3 --program-uid 62001 --scratch /tmp,/dev/shm --kill-scope uid

It imports the standard library (and whatever ``--preload`` names) once, then forks one child per
piece of work the parent sends over the control socket. A fork costs about a millisecond where a
fresh interpreter costs tens, which is what makes a sandboxed run cheaper than a bare
``subprocess.run([python, ...])``; and the fork is made one run ahead (:meth:`Server.fork_spare`),
while the parent reads the previous result, so a run hands its pipes to a child already waiting.

Why the program cannot touch it:

- The server keeps uid 0 *inside the sandbox* with only CAP_SETUID, CAP_SETGID and CAP_KILL (no
  file or admin capabilities, ``no_new_privs``); each child drops to the sandbox's own program uid
  before any submitted code runs, which clears every capability. A program can neither signal nor
  ptrace its server.
- The child closes the control socket before it becomes the program, and reads its code and test
  from a private pipe *after* the fork: the server never holds a submission in its memory, so
  nothing of an earlier submission can be found in a later one's copy of it.
- After every run the server kills every process of the program uid (``kill(-1)`` from a helper
  that has that uid: atomic against fork, so double-forked daemons go too) and reports only then.

Standard library only: this file runs where rewardhub is not installed.
"""

from __future__ import annotations

import argparse
import builtins
import gc
import importlib
import os
import select
import shutil
import signal
import socket
import sys
import time
from typing import Any

try:
    from . import child, pristine, wire
except ImportError:  # run as a plain script inside the sandbox (-I keeps its folder off sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import child  # type: ignore[no-redef]
    import pristine  # type: ignore[no-redef]
    import wire  # type: ignore[no-redef]

pristine.seal(globals())  # a run's child ends in this file's code, after the program

__all__ = ["main"]

KILL_SCOPES = ("pidns", "uid", "session")
"""How the server finds and kills a run's leftover processes. ``pidns``: everything in its own pid
namespace but init and itself, with one ``kill(-1)`` (atomic against fork, so a fork bomb cannot
outrun it; bubblewrap and Docker). ``uid``: every process of the program uid, by ``kill(-1)`` from
a helper with that uid (no pid namespace, but root: the unsafe backend as root). ``session``: the
run's session only (the unsafe backend as a normal user; a daemon that calls setsid escapes)."""


INITIAL_PID_NAMESPACE = 0xEFFFFFFC
"""The inode number of the host's own pid namespace (the kernel's PROC_PID_INIT_INO)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="driver.py")
    control = parser.add_mutually_exclusive_group(required=True)
    control.add_argument("--control-fd", type=int, help="an inherited socket to the parent")
    control.add_argument("--connect", help="a Unix socket path to dial instead (containers cannot inherit fds)")
    parser.add_argument("--program-uid", type=int, required=True)
    parser.add_argument("--scratch", required=True, help="comma-separated writable directories wiped on reset")
    parser.add_argument("--kill-scope", choices=KILL_SCOPES, required=True)
    parser.add_argument("--preload", default="", help="comma-separated modules to import once, before any fork")
    parser.add_argument("--check-ipc", action="store_true", help="report System V IPC objects left behind as dirty")
    parser.add_argument("--ahead", type=int, default=1, help="children forked in one burst, ahead of their runs")
    args = parser.parse_args(argv)
    if args.kill_scope == "pidns" and os.stat("/proc/self/ns/pid").st_ino == INITIAL_PID_NAMESPACE:
        parser.error("--kill-scope pidns outside a pid namespace would kill(-1) the whole machine")
    preloaded = _preload([name for name in args.preload.split(",") if name])
    pristine.remember_harness()
    if args.connect:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(args.connect)
    else:
        sock = socket.socket(fileno=args.control_fd)
    server = Server(
        control=sock,
        program_uid=args.program_uid,
        scratch=[path for path in args.scratch.split(",") if path],
        kill_scope=args.kill_scope,
        check_ipc=args.check_ipc,
        ahead=max(1, args.ahead),
    )
    # Everything so far lives as long as the server: out of the collector's sight, a full collection
    # (in the server or in a run's child) no longer writes to every object, which after a fork means
    # copying nearly every page (Python's own advice for fork servers).
    gc.freeze()
    server.fork_spares()
    server.reply({"op": "ready", "pid": os.getpid(), "uid": os.getuid(), "preloaded": preloaded})
    server.serve()
    return 0


def _preload(names: list[str]) -> list[str]:
    loaded = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        loaded.append(name)
    return loaded


class Spare:
    """A forked child waiting for its run on a socket of its own."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock

    def retire(self) -> None:
        """Close its socket (it exits on the end of file), make sure it is gone, and reap it."""
        self.sock.close()
        _signal(self.pid, signal.SIGKILL)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class Server:
    def __init__(
        self,
        control: socket.socket,
        program_uid: int,
        scratch: list[str],
        kill_scope: str,
        check_ipc: bool,
        ahead: int = 1,
    ) -> None:
        self.control = control
        self.program_uid = program_uid
        self.scratch = scratch
        self.kill_scope = kill_scope
        self.check_ipc = check_ipc
        self.builtins_snapshot = dict(builtins.__dict__)
        self.session: int | None = None
        self.can_change_uid = os.getuid() != program_uid
        self.ahead = ahead
        self.spares: list[Spare] = []
        """Children forked ahead of the next runs, waiting for them (see :meth:`fork_spares`)."""
        if self.can_change_uid and os.geteuid() == 0:
            # Every job folder is world-writable with the sticky bit, as /tmp is. Docker gives a tmpfs
            # the mode of the image's folder under it (755 for /mnt) whatever its mode= option says.
            for path in scratch:
                os.chmod(path, 0o1777)

    def reply(self, message: dict[str, Any]) -> None:
        wire.send_message(self.control, message)

    def serve(self) -> None:
        """Handle requests until the parent goes away; then leave nothing running."""
        try:
            while True:
                try:
                    message, fds = wire.recv_message(self.control)
                except EOFError:
                    return
                op = message.get("op")
                if op == "exec":
                    self.execute(message, fds)
                elif op == "reset":
                    _close(fds)
                    self.reply(self.reset())
                elif op == "kill":  # nothing is running: the run it was meant for already ended
                    _close(fds)
                else:
                    _close(fds)
                    self.reply({"op": "error", "message": f"unknown op {op!r}"})
        finally:
            self.retire_spares()
            self.kill_programs()

    # --- one run ------------------------------------------------------------------------------

    def execute(self, message: dict[str, Any], fds: list[int]) -> None:
        oom_before = _oom_kills()
        pid = self._hand_over(message, fds)
        if pid is None:
            self.reply({"op": "exited", "status": None, "error": "the server could not fork"})
            return
        self.session = pid  # the child called setsid(): its pid is its session id
        self.fork_spares()  # while this run's child runs: back-to-back runs never wait for a fork
        status, usage = self._wait(pid)
        all_gone = self.kill_programs()
        self.session = None
        exited = {
            "op": "exited",
            "status": status,
            "cpu_s": usage.ru_utime + usage.ru_stime if usage else None,
            "maxrss_kb": usage.ru_maxrss if usage else None,
            "oom_kills_before": oom_before,
            "oom_kills": _oom_kills(),
        }
        if message.get("reset"):  # the job's last run: end the job too, and say so in the same reply
            exited["reset"] = self.reset(all_gone)
        self.reply(exited)
        self.fork_spares()  # if killing this run's leftovers took the waiting ones

    def _hand_over(self, message: dict[str, Any], fds: list[int]) -> int | None:
        """Give the run to the waiting child (forking one if there is none); its pid, None if it cannot fork."""
        try:
            for _attempt in range(2):
                if not self.fork_spares():
                    return None
                spare = self.spares.pop(0)  # the oldest: likeliest to be ready
                try:
                    wire.send_run(spare.sock, message, fds)
                except OSError:  # it died waiting (killed with a run's leftovers): a fresh one
                    spare.retire()
                    continue
                spare.sock.close()
                return spare.pid
            return None
        finally:
            _close(fds)

    def fork_spares(self) -> bool:
        """Fork the children the next runs become, ahead of need, so no run waits for a fork; False
        if none could be forked.

        Forked in bursts of ``ahead`` when none is left: every fork write-protects the server's
        memory, and each page the server writes afterwards is copied once, however many children
        were forked in between, so a burst pays those copies once for that many runs.

        Each child prepares what does not depend on its run (its own session, no core files, fresh
        random state) and then waits on a socket of its own for the run's message and pipes. It is
        a fork of this server, which never holds a submission, and it runs none of the submission's
        code until its run arrives: it keeps the server's user, which programs can neither signal
        nor trace nor read. Killing a run's leftovers with ``kill(-1)`` takes the waiting children
        too; a fresh burst follows.
        """
        if not self.spares:
            sys.stdout.flush()
            sys.stderr.flush()
            for _ in range(self.ahead):
                spare = self._fork_spare()
                if spare is None:
                    break
                self.spares.append(spare)
        return bool(self.spares)

    def _fork_spare(self) -> Spare | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return None
        if pid == 0:
            status = 125
            try:
                ours.close()
                for other in self.spares:  # the burst's earlier children: not this one's business
                    other.sock.close()
                status = child.wait_for_run(theirs, self)
            except BaseException as exc:  # a failure of the harness itself
                _harness_failed(exc)
            finally:
                pristine.exit_now(status)  # never os._exit: the program may have rebound it
        theirs.close()
        return Spare(pid, ours)

    def retire_spares(self) -> None:
        for spare in self.spares:
            spare.retire()
        self.spares = []

    def _wait(self, pid: int) -> tuple[int, Any]:
        """Wait for the child while still answering ``kill``; the parent keeps the clock."""
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        try:
            while True:
                waiting = [self.control] + ([pidfd] if pidfd is not None else [])
                readable, _, _ = select.select(waiting, [], [], None if pidfd is not None else 0.01)
                if self.control in readable:
                    try:
                        message, fds = wire.recv_message(self.control)
                    except EOFError:  # the parent is gone: stop the run, then stop
                        self.kill_programs()
                        os.waitpid(pid, 0)
                        raise SystemExit(0) from None
                    _close(fds)
                    if message.get("op") == "kill":
                        self.kill_programs()
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    return status, usage
        finally:
            if pidfd is not None:
                os.close(pidfd)

    # --- cleaning up ----------------------------------------------------------------------------

    def kill_programs(self) -> bool:
        """Kill every leftover process of the program; True once none is left."""
        for attempt in range(400):
            alive = self._leftovers()
            if not alive:
                return True
            if self.kill_scope == "pidns":  # kill(-1) would take the waiting children too
                self.retire_spares()
            if self.kill_scope == "pidns":
                _signal(-1, signal.SIGKILL)
            elif self.kill_scope == "uid":
                self._as_program_user(lambda: os.kill(-1, signal.SIGKILL))
            for pid in alive:  # also covers a helper that could not fork under a full pids limit
                _signal(pid, signal.SIGKILL)
            if attempt:
                time.sleep(min(0.05, 0.001 * attempt))
        return not self._leftovers()

    def _leftovers(self) -> list[int]:
        ours = {1, os.getpid(), *(spare.pid for spare in self.spares)}
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in ours:
                continue
            fields = _status_fields(int(name))
            if not fields or fields.get("State", "").startswith(("Z", "X")):
                continue
            if self.kill_scope == "uid" and fields.get("Uid", "").split()[:1] != [str(self.program_uid)]:
                continue
            if self.kill_scope == "session" and _session_of(int(name)) != self.session:
                continue
            found.append(int(name))
        return found

    def _as_program_user(self, action: Any) -> None:
        """Run ``action`` in a short-lived child that has the program's uid (and nothing else)."""
        try:
            pid = os.fork()
        except OSError:  # out of processes: the caller sees what is left and tries again
            return
        if pid == 0:
            status = 1
            try:
                child.drop_to(self.program_uid)
                action()
                status = 0
            except BaseException:  # a helper's failure is seen as leftovers by the caller
                pass
            finally:
                os._exit(status)
        os.waitpid(pid, 0)

    def reset(self, all_gone: bool | None = None) -> dict[str, Any]:
        """End of a job: no process left, scratch empty, no IPC objects; else the sandbox is dirty.

        ``all_gone`` is what killing the last run's leftovers just answered, when it did.
        """
        problems = []
        if not (self.kill_programs() if all_gone is None else all_gone):
            problems.append("processes survived SIGKILL")
        left = {path: _entries(path) for path in self.scratch}
        if self.can_change_uid and any(self._owns_any(entries) for entries in left.values()):
            self._as_program_user(lambda: [_empty_dir(path, _entries(path)) for path in self.scratch])
            left = {path: _entries(path) for path in self.scratch}
        for path, entries in left.items():
            if entries and not _empty_dir(path, entries):
                problems.append(f"could not empty {path}")
        if self.check_ipc:
            problems += [f"System V {kind} objects left behind" for kind in ("shm", "msg", "sem") if _ipc_left(kind)]
        return {"op": "reset", "dirty": bool(problems), "problems": problems}

    def _owns_any(self, entries: list[os.DirEntry[str]]) -> bool:
        """Whether the program left one of these entries (anything deeper sits inside one of them)."""
        try:
            return any(entry.stat(follow_symlinks=False).st_uid == self.program_uid for entry in entries)
        except OSError:
            return True


def _harness_failed(exc: BaseException) -> None:
    """Say on the run's stderr that the harness, not the program, failed: in one line, with no
    frame or path of ours (those are for our tests, not for a client)."""
    try:
        what = f"{type(exc).__name__}: {exc}"
    except BaseException:
        what = type(exc).__name__
    try:
        pristine.write(2, f"sandbox harness error: {what[:500]}\n".encode(errors="replace"))
    except OSError:
        pass


def _ipc_left(kind: str) -> bool:
    """Whether the sandbox's IPC namespace holds objects of this kind (the table has a line past its header)."""
    try:
        fd = os.open(f"/proc/sysvipc/{kind}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.read(fd, 1 << 16).count(b"\n") > 1
    except OSError:
        return False
    finally:
        os.close(fd)


def _entries(path: str) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(path))
    except OSError:
        return []


def _empty_dir(path: str, entries: list[os.DirEntry[str]]) -> bool:
    """Remove what this process may remove of ``entries`` (``path``'s); True if ``path`` is empty after."""
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                _open_up(entry.path)
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue  # not ours to remove (the other half of reset removes it)
    try:
        return not os.listdir(path)
    except OSError:
        return True


def _open_up(directory: str) -> None:
    """Make a tree the program chmod-ed shut (``chmod 0``) traversable again, so it can be removed."""
    try:
        os.chmod(directory, 0o700)
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _open_up(entry.path)


OOM_FILES = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
_oom_file = next((path for path in OOM_FILES if os.path.exists(path)), None)
"""Where a container sees its own memory cgroup's kill count; None where /sys is not mounted (bubblewrap)."""


def _oom_kills() -> int | None:
    """The memory cgroup's kill count as seen from inside (containers); None where it cannot be read."""
    if _oom_file is None:
        return None
    try:
        with open(_oom_file) as handle:
            for line in handle:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return None


def _status_fields(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return dict(line.rstrip("\n").split(":\t", 1) for line in handle if ":\t" in line)
    except OSError:
        return {}


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[4])
    except (OSError, IndexError, ValueError):
        return None


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:
        pass


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
