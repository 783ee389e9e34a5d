"""One submission in one warm sandbox: its files and build, then any number of runs.

A job is what a ``/v1/sandbox/run`` request or one ``code`` sample is: write the source (and any
input files) into the scratch folder, compile it if the language needs that, then run it once
per test. The scratch folder and the build survive between the runs of a job and are wiped when
the job ends.
"""

from __future__ import annotations

from typing import Any

from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.languages import Language
from rewardhub.sandbox.limits import COMPILE_LIMITS, Limits
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.sandbox.warm import Execution, WarmSandbox

__all__ = ["Job"]

WRITE_LIMITS = Limits(timeout_s=30.0, memory_mb=256, max_processes=4, max_file_mb=256)


class Job:
    def __init__(self, sandbox: WarmSandbox, language: Language, code: str) -> None:
        self.sandbox = sandbox
        self.language = language
        self.code = code
        self.build: RunResult | None = None
        """The compiler's run, for compiled languages (its stderr has the warnings)."""
        self._unwritten: dict[str, str] | None = None

    @property
    def details(self) -> dict[str, Any]:
        return self.sandbox.isolation.details()

    def setup(self, files: dict[str, str] | None = None, compile_limits: Limits = COMPILE_LIMITS) -> RunResult | None:
        """Write the files and build the program; the failed build's result if it did not build.

        A program without a build step gets its files written by its first run instead (the same
        child, before it drops to the program's uid): one fork less per job.
        """
        everything = {**(files or {}), self.language.source: self.code}
        if self.language.compile is None:
            self._unwritten = everything
            return None
        written = self.sandbox.run(Execution("write", WRITE_LIMITS, payload={"files": everything}))
        if written.verdict != "ok":
            raise SandboxError(f"could not write the program's files: {written.stderr.strip() or written.verdict}")
        if self.language.compile is None:
            return None
        self.build = self.sandbox.run(Execution("argv", compile_limits, argv=self.language.compile))
        if self.build.ok or self.build.verdict == "sandbox_error":
            return None if self.build.ok else self.build
        reason = {"timeout": "the compiler ran out of time", "memory": "the compiler ran out of memory"}.get(
            self.build.verdict
        )
        details = {**self.build.details, "compiler_verdict": self.build.verdict}
        if reason:
            details["message"] = reason
        return RunResult(
            "compile_error",
            self.build.exit_code,
            self.build.stdout,
            self.build.stderr,
            self.build.elapsed_ms,
            None,
            details,
        )

    def run(
        self,
        stdin: str | bytes = b"",
        limits: Limits | None = None,
        test: dict[str, Any] | None = None,
        files: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> RunResult:
        """Run the program once: on ``stdin``, or (Python only) for one function-call or assert ``test``.

        ``files`` are written (read-only) into the scratch folder first, replacing earlier ones of the
        same name; ``args`` follow the program's name on its command line (a checker's file names).
        """
        limits = limits or Limits()
        data = stdin.encode() if isinstance(stdin, str) else stdin
        files = {**(self._unwritten or {}), **(files or {})}
        self._unwritten = None
        if not self.language.in_process:
            if test is not None:
                raise SandboxError(f"{self.language.name} programs can only be tested on stdin/stdout")
            payload = {"files": files} if files else None
            argv = (*self.language.run, *args)
            return self.sandbox.run(Execution("argv", limits, argv=argv, payload=payload, stdin=data))
        test = {**(test or {}), **({"args": list(args)} if args else {})}
        payload = {
            "path": f"{self.sandbox.scratch}/{self.language.source}",
            "code": self.code,
            "mode": "stdio",
            "files": files,
            **test,
        }
        return self.sandbox.run(Execution("python", limits, payload=payload, stdin=data))
