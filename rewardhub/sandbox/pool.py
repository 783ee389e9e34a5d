"""Warm sandboxes, shared by the threads of one process, at most ``concurrency`` at once.

A job takes the longest-idle warm sandbox (or starts one while fewer than ``concurrency`` exist,
else waits: excess work queues), and gives it back after a reset. A sandbox that served
``recycle_after`` jobs, came back dirty, or broke is closed and a fresh one takes its place on
demand, so no state lives longer than that.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rewardhub.sandbox.batch import BatchRuns, run_batch
from rewardhub.sandbox.builds import BuildCache
from rewardhub.sandbox.bwrap import BwrapIsolation, find_bwrap
from rewardhub.sandbox.cgroups import sweep
from rewardhub.sandbox.docker import DockerIsolation, image_commands
from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.isolation import CGROUP_PREFIX, Isolation, lease_uid, uid_taken
from rewardhub.sandbox.jobs import Job
from rewardhub.sandbox.languages import Language, language
from rewardhub.sandbox.limits import COMPILE_LIMITS, Limits
from rewardhub.sandbox.settings import SandboxSettings, in_effect
from rewardhub.sandbox.syscall_filter import bpf_program
from rewardhub.sandbox.unsafe import UnsafeIsolation
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.sandbox.warm import WarmSandbox

__all__ = ["SandboxPool", "compile_filter", "default_pool"]

BACKENDS: dict[str, type[Isolation]] = {"bwrap": BwrapIsolation, "docker": DockerIsolation, "unsafe": UnsafeIsolation}


class SandboxPool:
    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()
        if self.settings.backend == "bwrap":
            find_bwrap(self.settings.bwrap)  # refuse now, with the reason, rather than on first use
            compile_filter(self.settings)
        if self.settings.backend != "docker" and os.geteuid() == 0:
            sweep(CGROUP_PREFIX, _held)  # cgroups of sandboxes whose worker was killed
        self._has_command = image_commands(self.settings) if self.settings.backend == "docker" else None
        """Where a container's image, not this host, decides which languages there are."""
        self.builds = BuildCache(self.settings.build_cache_mb << 20)
        """Compiled submissions, shared by every job of this pool (a submission compiles once)."""
        self._idle: deque[WarmSandbox] = deque()
        self._live = 0
        self.started = 0
        """Sandboxes started so far (a fresh one replaces each recycled one)."""
        self._closed = False
        self._cond = threading.Condition()

    @contextmanager
    def job(self, lang: str | Language, code: str) -> Iterator[Job]:
        """A warm sandbox for one submission; wiped and handed back when the block ends."""
        chosen = lang if isinstance(lang, Language) else language(lang, self._has_command)
        sandbox = self._acquire()
        try:
            yield Job(sandbox, chosen, code, self.builds)
        finally:
            self._release(sandbox)

    def run(
        self,
        lang: str,
        code: str,
        stdin: str | bytes = b"",
        files: Mapping[str, str | bytes] | None = None,
        limits: Limits | None = None,
        compile_limits: Limits = COMPILE_LIMITS,
    ) -> RunResult:
        """Build and run one program once (``POST /v1/sandbox/run``)."""
        with self.job(lang, code) as job:
            failed_build = job.setup(files, compile_limits)
            return failed_build or job.run(stdin, limits, last=True)

    def run_tests(
        self,
        lang: str | Language,
        code: str,
        tests: list[dict[str, Any]],
        limits: Limits,
        deadline: float,
        stop: bool = False,
        stdio_series: bool = True,
    ) -> BatchRuns:
        """Build one submission and run all its tests in one sandboxed run (:func:`run_batch`: each
        test with its own clock, ``limits.timeout_s``), on a warm sandbox that is back in the pool
        when this returns, so the caller judges the runs without holding it.

        ``deadline``: the :func:`time.monotonic` instant by which the tests have to have run; the
        build's time counts against it. A test is a :func:`run_batch` spec, which never holds its
        expected value. A program that does not build runs no test.
        """
        with self.job(lang, code) as job:
            build_failure = job.setup()
            sandbox = job.details
            if build_failure is not None:
                return BatchRuns([None] * len(tests), build_failure, sandbox)
            left = deadline - time.monotonic()
            runs = run_batch(job, tests, limits, left, stop, last=True, stdio_series=stdio_series)
        return BatchRuns(runs, None, sandbox)

    def warm_up(self, count: int = 1) -> None:
        """Start sandboxes ahead of the first job (benchmarks, readiness checks)."""
        sandboxes = [self._acquire() for _ in range(min(count, self.settings.concurrency))]
        for sandbox in sandboxes:
            self._release(sandbox, reset=False)

    def describe(self) -> dict[str, Any]:
        with self._cond:
            return {
                "backend": self.settings.backend,
                "live": self._live,
                "idle": len(self._idle),
                "concurrency": self.settings.concurrency,
            }

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, deque()
            self._live -= len(idle)
            self._cond.notify_all()
        for sandbox in idle:
            sandbox.close()

    def _acquire(self) -> WarmSandbox:
        dead: list[WarmSandbox] = []
        try:
            with self._cond:
                while True:
                    if self._closed:
                        raise SandboxError("the sandbox pool is closed")
                    if self._idle:
                        # the longest idle: its server is likeliest to have forked the next run's child
                        sandbox = self._idle.popleft()
                        if sandbox.alive:
                            return sandbox
                        dead.append(sandbox)  # killed while idle (a container removed, say): replace it
                        self._live -= 1
                        continue
                    if self._live < self.settings.concurrency:
                        self._live += 1
                        break
                    self._cond.wait()
        finally:
            for sandbox in dead:
                sandbox.close()
        try:
            return self._start()
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _start(self) -> WarmSandbox:
        lease = lease_uid(self.settings.uid_base, self.settings.uid_count)
        try:
            isolation = BACKENDS[self.settings.backend](self.settings, lease)
        except BaseException:
            lease.release()
            raise
        sandbox = WarmSandbox(isolation, self.settings)
        sandbox.start()  # closes itself (and its isolation) if it fails
        with self._cond:
            self.started += 1
        return sandbox

    def _release(self, sandbox: WarmSandbox, reset: bool = True) -> None:
        keep = sandbox.reset() if reset else not sandbox.broken
        with self._cond:
            keep = keep and not self._closed
            if keep:
                self._idle.append(sandbox)
            else:
                self._live -= 1
            self._cond.notify()
        if not keep:
            sandbox.close()


def _held(cgroup_name: str) -> bool:
    uid = cgroup_name.removeprefix(CGROUP_PREFIX)
    return not uid.isdigit() or uid_taken(int(uid))


_default: SandboxPool | None = None
_default_lock = threading.Lock()


def default_pool() -> SandboxPool:
    """This process's pool, configured by the sandbox section of the settings this process was handed
    (:func:`~rewardhub.sandbox.settings.in_effect`: ``REWARDHUB_SANDBOX_*`` where none were); raises
    SandboxUnavailable if it cannot isolate."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SandboxPool(in_effect())
            atexit.register(_default.close)
        return _default


def compile_filter(settings: SandboxSettings | None = None) -> None:
    """Compile the system-call filter now, where the backend uses one (a subprocess, kept for the
    process): a fork server that calls this once hands it to every worker it forks, so none of them
    compiles its own on its first program. ``settings``: the default pool's when not given."""
    if settings is None:
        settings = in_effect()
    if settings.backend == "bwrap" and settings.syscall_filter:
        bpf_program(settings.seccomp_python)


def _forget_after_fork() -> None:
    """A forked child must not share its parent's sandboxes (their sockets would be read twice)."""
    global _default, _default_lock
    _default, _default_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
