"""The production backend: one warm container per sandbox, running the same fork server.

The container is the wall (``--network none --read-only --cap-drop ALL --pids-limit --memory
--cpus --init``, private tmpfs scratch, the system-call filter of
:mod:`~rewardhub.sandbox.syscall_filter` as its seccomp profile); inside it, the fork server and the harness are the very
same code as with bubblewrap, so the verdicts are the same. The parent and the server talk over a
Unix socket in a host folder bind-mounted into the container, which carries file descriptors just
as the inherited socket does locally: a test's pipes still go straight to the parent.

Users: the server starts as root *of the container* with only CAP_SETUID, CAP_SETGID and CAP_KILL
(``--user 0:0 --cap-drop ALL --cap-add ...``, ``no-new-privileges``), and every program runs as
the sandbox's own unprivileged uid. Starting the server itself as ``nobody`` would put it under the
programs' uid, where a program could kill it and turn its own failure into a masked
``sandbox_error``. See deploy/sandbox/README.md for the image and how to run it.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rewardhub.sandbox.cgroups import SandboxCgroups
from rewardhub.sandbox.errors import SandboxError, SandboxUnavailable
from rewardhub.sandbox.isolation import DRIVER_DIR, JOB_FOLDERS, PROGRAM_ENV, Isolation, UidLease, kill_uid, spawn
from rewardhub.sandbox.languages import LANGUAGES, SANDBOX_PATH
from rewardhub.sandbox.limits import SANDBOX_OWN_TASKS, Limits
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.syscall_filter import write_docker_profile

__all__ = ["DockerIsolation", "docker_command", "image_commands"]

INSIDE_DRIVER_DIR = "/opt/rewardhub/inside"
INSIDE_SOCKET_DIR = "/run/rewardhub"
"""Where the container sees its control socket: outside the scratch folders, which resets empty."""
CONTAINER_PYTHON = "python3"
MEMORY_OVERHEAD_MB = 128
"""The server's own share of the container's memory, on top of what a run may use."""


def docker_command(
    docker: str,
    image: str,
    name: str,
    socket_dir: str,
    driver_args: list[str],
    memory_mb: int,
    max_processes: int,
    cpus: float,
    scratch_mb: int,
    seccomp_profile: str | None = None,
) -> list[str]:
    """The ``docker run`` command line for one sandbox container (pure: tested as such)."""
    argv = [docker, "run", "--rm", "--name", name, "--init"]
    argv += ["--network", "none", "--read-only", "--ipc", "private"]
    argv += ["--user", "0:0", "--cap-drop", "ALL", "--cap-add", "SETUID", "--cap-add", "SETGID", "--cap-add", "KILL"]
    argv += ["--security-opt", "no-new-privileges"]
    if seccomp_profile is not None:  # the same policy as bubblewrap's (syscall_filter.py)
        argv += ["--security-opt", f"seccomp={seccomp_profile}"]
    argv += ["--pids-limit", str(max_processes + SANDBOX_OWN_TASKS)]
    argv += ["--memory", f"{memory_mb + MEMORY_OVERHEAD_MB}m", "--memory-swap", f"{memory_mb + MEMORY_OVERHEAD_MB}m"]
    argv += ["--cpus", f"{cpus:g}"]
    # Docker mounts a tmpfs noexec unless told otherwise; compiled programs run from the scratch
    # the job's writable folders (JOB_FOLDERS), as bubblewrap mounts them: /tmp the scratch, a quarter each for the rest
    argv += ["--tmpfs", f"{JOB_FOLDERS[0]}:rw,exec,nosuid,nodev,size={scratch_mb}m,mode=1777"]
    for folder in JOB_FOLDERS[1:]:
        argv += ["--tmpfs", f"{folder}:rw,exec,nosuid,nodev,size={max(16, scratch_mb // 4)}m,mode=1777"]
    # read-only is enough to connect to a socket, and keeps the programs from writing to the host
    argv += ["--volume", f"{DRIVER_DIR}:{INSIDE_DRIVER_DIR}:ro", "--volume", f"{socket_dir}:{INSIDE_SOCKET_DIR}:ro"]
    for key, value in PROGRAM_ENV.items():
        argv += ["--env", f"{key}={value}"]
    argv += ["--workdir", "/tmp", image, CONTAINER_PYTHON, "-I", "-B", f"{INSIDE_DRIVER_DIR}/driver.py", *driver_args]
    return argv


def image_commands(settings: SandboxSettings) -> Callable[[str], bool]:
    """Whether the image has a command on the programs' PATH: what decides which languages a
    container runs (the host's compilers are not in it). Asked of the image once, on first use."""
    docker = shutil.which(settings.docker) or settings.docker
    return lambda command: command in _commands_in(docker, settings.docker_image)


_probe_lock = threading.Lock()


@functools.lru_cache(maxsize=8)
def _commands_in(docker: str, image: str) -> frozenset[str]:
    wanted = sorted({command for lang in LANGUAGES for command in lang.commands})
    script = 'for c in "$@"; do command -v "$c" >/dev/null 2>&1 && echo "$c"; done; exit 0'
    argv = [docker, "run", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL", "--env"]
    argv += [f"PATH={SANDBOX_PATH}", "--entrypoint", "/bin/sh", image, "-c", script, "sh", *wanted]
    with _probe_lock:  # one probe at a time, however many threads ask first
        try:
            done = subprocess.run(argv, capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SandboxError(f"cannot ask image {image} for its toolchains: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[-500:]
        raise SandboxError(f"cannot ask image {image} for its toolchains: {said}")
    return frozenset(done.stdout.decode().split())


class DockerIsolation(Isolation):
    backend = "docker"
    scratch = JOB_FOLDERS
    memory_limit = "container"

    def __init__(self, settings: SandboxSettings, lease: UidLease) -> None:
        super().__init__(settings, lease)
        self.docker = shutil.which(settings.docker)
        if self.docker is None:
            raise SandboxUnavailable(
                f"sandbox backend 'docker' chosen, but the Docker client {settings.docker!r} is not installed"
            )
        self.name = f"rewardhub-sandbox-{os.getpid()}-{lease.uid}"
        self.socket_dir = Path(settings.docker_socket_dir) / self.name
        self._memory_mb = Limits().memory_mb
        self._max_processes = Limits().max_processes
        self.cgroups: SandboxCgroups | None = None
        """The container's own memory and pids cgroups, seen from this host (root): limits and
        kill counts are then read and set as bubblewrap's are, with the same code."""
        self._memory_bytes = 0

    def launch(self, driver_args: list[str]) -> tuple[subprocess.Popen[bytes], socket.socket]:
        self.socket_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = str(self.socket_dir / "control.sock")
        if len(path.encode()) >= 108:
            raise SandboxError(f"docker_socket_dir is too deep for a Unix socket path: {path}")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        command = docker_command(
            self.docker,
            self.settings.docker_image,
            self.name,
            str(self.socket_dir),
            [*driver_args, "--connect", f"{INSIDE_SOCKET_DIR}/control.sock"],
            self._memory_mb,
            self._max_processes,
            self.settings.docker_cpus,
            self.settings.scratch_mb,
            write_docker_profile(self.socket_dir) if self.settings.syscall_filter else None,
        )
        process = spawn(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            connection = self._accept(listener, process)
        finally:
            listener.close()
        self.cgroups = SandboxCgroups.of_process(_peer_pid(connection))
        return process, connection

    def _accept(self, listener: socket.socket, process: subprocess.Popen[bytes]) -> socket.socket:
        """The container's call, or an error as soon as it has exited (an image pull may take a while)."""
        deadline = time.monotonic() + self.settings.start_timeout_s
        listener.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if process.poll() is not None:
                    said = process.stderr.read()[-2000:].decode(errors="replace").strip() if process.stderr else ""
                    raise SandboxError(
                        f"container {self.name} exited with status {process.returncode}: {said}"
                    ) from None
                continue
            connection.settimeout(None)
            return connection
        raise SandboxError(f"container {self.name} did not connect within {self.settings.start_timeout_s:g}s")

    baseline_bytes = MEMORY_OVERHEAD_MB << 20
    """What the server and its tmpfs use before a program runs; measured once it is up."""

    def measure_baseline(self) -> None:
        if self.cgroups is not None:
            self.baseline_bytes = self.cgroups.memory_usage() + (16 << 20)

    def apply(self, limits: Limits) -> None:
        """The run's memory on top of what the server uses, and its processes, as with bubblewrap:
        written to the container's cgroups where this host can, else ``docker update``."""
        if self.cgroups is not None:
            wanted = (limits.memory_mb << 20) + self.baseline_bytes
            if wanted != self._memory_bytes:
                self.cgroups.set_memory(wanted)
                self._memory_bytes = wanted
            processes = limits.max_processes + SANDBOX_OWN_TASKS
            if processes != self._max_processes:
                self.cgroups.set_max_processes(processes)
                self._max_processes = processes
            return
        if (limits.memory_mb, limits.max_processes) == (self._memory_mb, self._max_processes):
            return
        memory = f"{limits.memory_mb + MEMORY_OVERHEAD_MB}m"
        command = [self.docker or "docker", "update", "--memory", memory, "--memory-swap", memory]
        command += ["--pids-limit", str(limits.max_processes + SANDBOX_OWN_TASKS), self.name]
        done = subprocess.run(command, capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            raise SandboxError(f"docker update failed: {done.stderr.decode(errors='replace').strip()}")
        self._memory_mb, self._max_processes = limits.memory_mb, limits.max_processes

    def oom_kills(self) -> int | None:
        """None where the container's cgroup is out of reach (or gone with the container): then its
        server's own count, if it still answers, decides."""
        try:
            return self.cgroups.oom_kills() if self.cgroups else None
        except OSError:
            return None

    def kill_programs(self) -> None:
        # no user namespace: the programs' uid in the container is that uid on the host
        if os.geteuid() == 0:
            kill_uid(self.program_uid)

    def destroy(self) -> None:
        if self.cgroups is not None:
            self.cgroups.close()  # Docker made them, and removes them with the container
        try:
            subprocess.run(
                [self.docker or "docker", "rm", "-f", self.name], capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.SubprocessError):
            pass
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        super().destroy()

    def details(self) -> dict[str, Any]:
        return {**super().details(), "uid": self.program_uid, "container": self.name}


def _peer_pid(connection: socket.socket) -> int:
    """The pid, in this host's namespace, of the process at the other end (the container's server)."""
    pid, _uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid
