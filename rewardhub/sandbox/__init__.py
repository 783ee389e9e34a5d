"""Run untrusted programs: kernel-isolated, resource-limited, warm, with verdicts users can act on.

>>> from rewardhub.sandbox import default_pool
>>> default_pool().run("python", "print(input()[::-1])", stdin="abc").stdout
'cba\\n'

Layers, bottom up: ``inside/`` (the fork server and Python harness that run in the sandbox),
``isolation`` with its backends (``bwrap``, ``docker``, ``unsafe``) and ``cgroups``, ``warm`` (one
sandbox and its protocol), ``streams`` and ``verdicts`` (the parent's side of a run), ``jobs``,
``builds`` (compiled submissions kept by source hash), ``batch`` (every test of one Python
submission in one run, a test process per test forked inside it) and ``pool`` (what callers use),
``service`` (the way in for callers on an event loop: the API's ``/v1/sandbox/run`` and the
python grader); ``languages`` declares the nine languages.

This module is the sandbox's public face: callers outside the package import from here, never
from its modules (``tests/test_layering.py`` holds the ``code`` verifier to it). The sandbox runs
programs and says what happened; whether that was right is the caller's to judge, so the ``code``
verifier's trusted half (test formats, asserts, output comparison, checkers) lives with the
verifier, in :mod:`rewardhub.verifiers.code`. What it needs of a run's record is
:func:`decode_value`, the wire's reading of a value the program's process sent.

What it covers: no network, own pid/IPC/UTS namespaces, read-only system, private size-capped
scratch, empty environment, an unprivileged uid per sandbox, memory (cgroup or RLIMIT_AS),
processes, file size, open files, CPU and wall-clock limits, output caps, a system-call filter
(``syscall_filter``: no new namespaces, keyrings, eBPF, perf, io_uring, mounts, ptrace, kernel
loading). What it does not: defence against kernel exploits through the calls that stay allowed.
"""

from rewardhub.sandbox.batch import BatchRuns, run_batch
from rewardhub.sandbox.errors import CheckerFailed, SandboxError, SandboxUnavailable, UnsupportedLanguage
from rewardhub.sandbox.inside.wire import decode_value
from rewardhub.sandbox.jobs import Job
from rewardhub.sandbox.languages import LANGUAGES, Language, language
from rewardhub.sandbox.limits import COMPILE_LIMITS, Limits
from rewardhub.sandbox.pool import SandboxPool, compile_filter, default_pool
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.verdicts import VERDICTS, RunResult, Verdict

__all__ = [
    "BatchRuns",
    "COMPILE_LIMITS",
    "CheckerFailed",
    "LANGUAGES",
    "VERDICTS",
    "Job",
    "Language",
    "Limits",
    "RunResult",
    "SandboxError",
    "SandboxPool",
    "SandboxSettings",
    "SandboxUnavailable",
    "UnsupportedLanguage",
    "Verdict",
    "compile_filter",
    "decode_value",
    "default_pool",
    "language",
    "run_batch",
]
