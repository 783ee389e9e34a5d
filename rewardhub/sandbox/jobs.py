"""One submission in one warm sandbox: its files and build, then any number of runs.

A job is what a ``/v1/sandbox/run`` request or one ``code`` sample is: write the source (and any
input files) into the scratch folder, compile it if the language needs that, then run it once
per test. The scratch folder and the build survive between the runs of a job and are wiped when
the job ends. With a :class:`~rewardhub.sandbox.builds.BuildCache`, a submission that was built
before is not compiled again: its artifacts are written beside its source by the first run.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from rewardhub.sandbox.builds import Artifact, Build, BuildCache, build_key
from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.languages import Language
from rewardhub.sandbox.limits import COMPILE_LIMITS, Limits
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.sandbox.warm import Execution, WarmSandbox

__all__ = ["Job"]

WRITE_LIMITS = Limits(timeout_s=30.0, memory_mb=256, max_processes=4, max_file_mb=256)
MAX_FETCH_BYTES = 64 << 20
"""Most bytes one fetch brings back out of the sandbox (a build's artifacts, or files a caller asked for)."""
FETCH_LIMITS = Limits(
    timeout_s=30.0, memory_mb=512, max_processes=4, max_output_bytes=MAX_FETCH_BYTES * 4 // 3 + (1 << 20)
)


class Job:
    def __init__(self, sandbox: WarmSandbox, language: Language, code: str, builds: BuildCache | None = None) -> None:
        self.sandbox = sandbox
        self.language = language
        self.code = code
        self.builds = builds
        self.build: RunResult | None = None
        """The compiler's run, for compiled languages (its stderr has the warnings; ``details["cached"]``
        says it was an earlier request's build)."""
        self._unwritten: dict[str, Any] | None = None
        self._ended = False

    @property
    def details(self) -> dict[str, Any]:
        return self.sandbox.isolation.details()

    def setup(
        self, files: Mapping[str, str | bytes] | None = None, compile_limits: Limits = COMPILE_LIMITS
    ) -> RunResult | None:
        """Write the files and build the program; the failed build's result if it did not build.

        What the first run needs anyway (files, and a cached build's artifacts) is written by that
        run's own child, before it drops to the program's uid: one fork less per job.
        """
        everything = {**_encoded(files or {}), self.language.source: self.code}
        if self.language.compile is None:
            self._unwritten = everything
            return None
        if self.builds is None:
            built = self._compile(everything, compile_limits, keep=False)
        else:
            key = build_key(self.language, self.code, files)
            built, cached = self.builds.build(key, lambda: self._compile(everything, compile_limits, keep=True))
            if cached:
                artifacts = {path: artifact.encoded for path, artifact in built.artifacts.items()}
                self._unwritten = {**everything, **artifacts}
                compiler = built.compiler
                built = Build(
                    RunResult(
                        compiler.verdict,
                        compiler.exit_code,
                        compiler.stdout,
                        compiler.stderr,
                        compiler.elapsed_ms,
                        None,
                        {**compiler.details, "cached": True},
                    ),
                    built.artifacts,
                )
        self.build = built.compiler
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

    def _compile(self, everything: dict[str, Any], limits: Limits, keep: bool) -> Build:
        """Write the sources, run the compiler in this sandbox; with ``keep``, bring the artifacts out."""
        assert self.language.compile is not None
        written = self.sandbox.run(Execution("write", WRITE_LIMITS, payload={"files": everything}))
        if written.verdict != "ok":
            raise SandboxError(f"could not write the program's files: {written.stderr.strip() or written.verdict}")
        env = dict(self.language.compile_env)
        limits = limits.with_(reserved_mb=max(limits.reserved_mb, self.language.reserved_mb))
        compiler = self.sandbox.run(Execution("argv", limits, argv=self.language.compile, env=env))
        artifacts: dict[str, Artifact] = {}
        if compiler.ok and keep:
            try:
                artifacts = self.fetch(self.language.artifacts)
            except SandboxError:
                artifacts = {}  # too big to keep, say: this job still has its build, the cache does not
        return Build(compiler, artifacts)

    def fetch(self, paths: tuple[str, ...] | list[str], max_bytes: int = MAX_FETCH_BYTES) -> dict[str, Artifact]:
        """The files at ``paths`` (relative to the working directory, or absolute in the job's folders,
        ``JOB_FOLDERS``; a folder: every file in it) that exist, read as the program's user, each named
        as asked. Raises SandboxError if they do not fit in ``max_bytes``."""
        if self._ended:
            raise SandboxError("this job's last run is over: its sandbox has been wiped")
        if self._unwritten is not None:  # nothing has run yet: what would be there is what we hold
            self.sandbox.run(Execution("write", WRITE_LIMITS, payload={"files": self._unwritten}))
            self._unwritten = None
        payload = {"paths": list(paths), "max_bytes": max_bytes}
        fetched = self.sandbox.run(Execution("fetch", FETCH_LIMITS, payload=payload))
        if fetched.verdict != "ok":
            why = fetched.stderr.strip() or fetched.details.get("message") or fetched.verdict
            raise SandboxError(f"could not read the files back: {why}")
        try:
            found = json.loads(fetched.stdout)["files"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SandboxError(f"unreadable answer from the file reader: {exc}") from None
        return {path: Artifact(base64.b64decode(e["base64"]), bool(e["executable"])) for path, e in found.items()}

    def run(
        self,
        stdin: str | bytes = b"",
        limits: Limits | None = None,
        test: dict[str, Any] | None = None,
        files: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        last: bool = False,
        pace_s: float | None = None,
    ) -> RunResult:
        """Run the program once: on ``stdin``, or (Python only) for one function-call, assert or whole ``test``
        (a whole test's ``source`` goes on stdin, never in the payload: :func:`_whole_test_on_stdin`).

        ``files`` are written (read-only) into the scratch folder first, replacing earlier ones of the
        same name; ``args`` follow the program's name on its command line (a checker's file names).
        ``last`` says no other run of this job follows: the sandbox is wiped right after this one.
        ``pace_s``: a series of tests, each reporting a line with this long on its own clock
        (:func:`rewardhub.sandbox.batch.run_batch`).
        """
        if self._ended:
            raise SandboxError("this job's last run is over: its sandbox has been wiped")
        self._ended = last
        limits = limits or Limits()
        if self.language.reserved_mb > limits.reserved_mb:
            limits = limits.with_(reserved_mb=self.language.reserved_mb)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        files = {**(self._unwritten or {}), **(files or {})}
        self._unwritten = None
        if not self.language.in_process:
            argv, env = (*self.language.run_argv(limits), *args), self.language.run_env(limits)
            if test is not None and test.get("mode") == "batch":  # its cases, spawned by a coordinator
                payload = {**test, "mode": "native_batch", "argv": list(argv), "env": env, "files": files}
                return self.sandbox.run(Execution("python", limits, payload=payload, last=last))
            if test is not None:
                raise SandboxError(f"{self.language.name} programs can only be tested on stdin/stdout")
            payload = {"files": files} if files else None
            execution = Execution("argv", limits, argv=argv, payload=payload, stdin=data, env=env, last=last)
            return self.sandbox.run(execution)
        test = {**(test or {}), **({"args": list(args)} if args else {})}
        if test.get("mode") == "check":
            data = _whole_test_on_stdin(test, data)
        payload = {
            "path": f"{self.sandbox.scratch}/{self.language.source}",
            "code": self.code,
            "mode": "stdio",
            "files": files,
            **test,
        }
        return self.sandbox.run(Execution("python", limits, payload=payload, stdin=data, last=last, pace_s=pace_s))


def _whole_test_on_stdin(test: dict[str, Any], stdin: bytes) -> bytes:
    """A whole test's source leaves the payload for the run's stdin, which the test process reads
    only after it has forked the program's process: no copy of the test is ever in a process the
    program's code runs in (:mod:`rewardhub.sandbox.inside.check_process`)."""
    source = test.pop("source", "")
    if stdin or not isinstance(source, str) or not source.strip():
        raise SandboxError("a whole test needs its source, and its program gets no stdin")
    return source.encode("utf-8", "surrogatepass")


def _encoded(files: Mapping[str, str | bytes]) -> dict[str, Any]:
    """Files as the child writes them: text as it is, bytes in base64."""
    return {path: content if isinstance(content, str) else _encoded_bytes(content) for path, content in files.items()}


def _encoded_bytes(data: bytes, executable: bool = False) -> dict[str, Any]:
    return {"base64": base64.b64encode(data).decode("ascii"), "executable": executable}
