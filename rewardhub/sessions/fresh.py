"""Verification in a fresh sandbox: a session judged from its declared artifacts only.

Why: whatever ran in a session could have prepared its own grading. In-session tests
(:meth:`~rewardhub.sessions.sandbox.SessionSandbox.run_tests`) stop the session's processes and run
Python with its user-level hooks off, but they still run among the session's files: a reward or
report file the tests' command reads, a module the tests import under a name the system lacks
(``pytest.py`` where pytest is not installed), a link to the tests' expected output, a fifo that
blocks a reader. Here the tests run where the agent never was:

1. every process of the session is stopped (its kernel ends; the sandbox's server kills what is
   left, :meth:`SessionSandbox.stop_kernel`);
2. the trusted side copies out only the declared artifacts (:mod:`rewardhub.sandbox.inside.collect`:
   regular files, never through a link, per-file and total caps);
3. a new sandbox (same backend and settings as the session's, started for this and closed after)
   gets the artifacts, then the tests' files over them (the tests' files win a shared name), and
   runs the command in :func:`~rewardhub.sessions.sandbox.test_environment`: the session's
   environment variables, ``PATH``, site-packages, home and processes are not there to carry.

The tests' files and expected values are never inside the session.

Verdicts: exit 0 passes (1.0). A declared artifact that is missing, or refused (a link, a folder
where a file was declared, a fifo, a socket, a device, past a cap, unreadable), is the agent's
failure: ``runtime_error`` without running the tests (0.0), ``details["artifacts"]`` saying which
and why. A failure of the trusted side (the copy-out run failed, the new sandbox did not start) is
``sandbox_error``: no verdict, never a pass.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sandbox.errors import SandboxError, SandboxUnavailable
from ..sandbox.jobs import FETCH_LIMITS, _encoded_bytes
from ..sandbox.settings import SandboxSettings
from ..sandbox.verdicts import RunResult, sandbox_failure
from ..sandbox.warm import Execution
from .sandbox import SessionLimits, SessionSandbox, test_run

__all__ = [
    "ARTIFACT_FILE_BYTES",
    "ARTIFACT_TOTAL_BYTES",
    "MAX_ARTIFACTS",
    "MAX_ARTIFACT_BYTES",
    "Collected",
    "artifact_paths",
    "collect",
    "run_fresh",
]

ARTIFACT_FILE_BYTES = 1 << 20
"""Default cap on one artifact (a solution is source, not data)."""
ARTIFACT_TOTAL_BYTES = 8 << 20
"""Default cap on all of one verification's artifacts together."""
MAX_ARTIFACT_BYTES = 64 << 20
"""The largest either cap may be set to (what one fetch may bring out of a sandbox)."""
MAX_ARTIFACTS = 1000
"""Files one verification carries at most (a folder or glob past it: refused)."""
MAX_DECLARED = 256
"""Artifact names or globs one verification may declare."""


def artifact_paths(paths: Sequence[str]) -> list[str]:
    """The declared artifacts, checked as test file paths are: relative, inside the working directory,
    no ``..``; a glob's wildcards (``*``, ``?``, ``[...]``) stay within one path segment. Raises
    ValueError with the offending path (a 4xx at the edge)."""
    if len(paths) > MAX_DECLARED:
        raise ValueError(f"at most {MAX_DECLARED} artifacts may be declared")
    for path in paths:
        parts = path.split("/")
        if not path or path.startswith("/") or "\0" in path or any(part in ("", "..") for part in parts[:-1]):
            raise ValueError(f"artifact paths must be relative, inside the session: {path!r}")
        if ".." in parts or "**" in path:
            raise ValueError(f"artifact paths must be relative, inside the session (no '..', no '**'): {path!r}")
    return list(paths)


@dataclass(frozen=True)
class Collected:
    """What came out of a session: the artifacts' bytes (and executable bits), and what did not."""

    files: dict[str, tuple[bytes, bool]]
    missing: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every declared artifact is there and travels."""
        return not self.missing and not self.refused

    def summary(self) -> dict[str, Any]:
        """What ``details["artifacts"]`` says: sizes of what was copied, and what was not and why."""
        return {
            "copied": {path: len(data) for path, (data, _) in self.files.items()},
            "missing": list(self.missing),
            "refused": dict(self.refused),
            "left_out": dict(self.left_out),
        }

    def unearned(self, elapsed_ms: float) -> RunResult:
        """The verdict of a verification whose artifacts are not all there: the agent's failure, a 0."""
        reasons = [f"{path}: missing" for path in self.missing]
        reasons += [f"{path}: {why}" for path, why in self.refused.items()]
        message = "declared artifacts did not travel, the tests were not run: " + "; ".join(reasons)
        details = {"verification": "fresh", "artifacts": self.summary(), "message": message}
        return RunResult("runtime_error", None, "", message, elapsed_ms, None, details)


def collect(box: SessionSandbox, paths: Sequence[str], max_file_bytes: int, max_total_bytes: int) -> Collected:
    """Stop every process of the session, then copy its declared artifacts out (as the session's
    user, in its sandbox, by the sandbox's own trusted code). Raises SandboxError when the copy-out
    itself failed: that is no verdict on the agent."""
    box.stop_kernel()
    spec = {
        "paths": list(paths),
        "max_file_bytes": min(max_file_bytes, MAX_ARTIFACT_BYTES),
        "max_total_bytes": min(max_total_bytes, MAX_ARTIFACT_BYTES),
        "max_files": MAX_ARTIFACTS,
    }
    fetched = box.sandbox.run(Execution("fetch", FETCH_LIMITS, payload={"collect": spec}))
    if fetched.verdict != "ok":
        why = fetched.stderr.strip()[-500:] or fetched.details.get("message") or fetched.verdict
        raise SandboxError(f"could not copy the session's artifacts out: {why}")
    try:
        answer = json.loads(fetched.stdout)
        files = {
            str(path): (base64.b64decode(entry["base64"]), bool(entry["executable"]))
            for path, entry in answer["files"].items()
        }
        return Collected(files, [str(p) for p in answer["missing"]], dict(answer["refused"]), dict(answer["left_out"]))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SandboxError(f"unreadable answer from the artifact reader: {exc}") from None


def run_fresh(
    settings: SandboxSettings,
    limits: SessionLimits,
    command: str,
    timeout_s: float,
    files: Mapping[str, str] | None,
    collected: Collected,
    box: SessionSandbox | None = None,
) -> RunResult:
    """Run the test command in a new sandbox holding the artifacts and the tests' files; the sandbox
    is closed after. ``box``: one started for this already (a spare no session ever used)."""
    started = time.monotonic()
    try:
        box = box or SessionSandbox(settings, limits)
    except (SandboxError, SandboxUnavailable) as exc:
        return sandbox_failure(f"the fresh sandbox did not start: {exc.message}", verification="fresh")
    try:
        written: dict[str, Any] = {
            path: _encoded_bytes(data, executable) for path, (data, executable) in collected.files.items()
        }
        written.update(files or {})  # the tests' files win a name the agent also used
        result = test_run(box.sandbox, command, limits.kernel_limits().with_(timeout_s=timeout_s), written)
    except SandboxError as exc:
        return sandbox_failure(f"the fresh sandbox failed: {exc.message}", verification="fresh")
    finally:
        box.close()
    details = {**result.details, "verification": "fresh", "artifacts": collected.summary()}
    details["fresh_ms"] = round((time.monotonic() - started) * 1000.0, 3)
    return RunResult(
        result.verdict, result.exit_code, result.stdout, result.stderr, result.elapsed_ms, result.record, details
    )
