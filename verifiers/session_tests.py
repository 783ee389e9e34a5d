"""``session_tests``: the final state of a session (a stateful sandbox an agent worked in), judged by tests.

The sample names a live session of the caller's API key in ``metadata.session``; the config gives
the test ``command`` (and optional test ``files``, written read-only beside the session's). The
command runs on the session's files in a fresh program of the session's sandbox, as ``POST
/v1/sessions/{id}/test`` runs it: score 1.0 when it exits 0, else 0.0, with the verdict, exit code
and the end of stderr in ``details``. This is the common agentic-coding reward: tests written
against the files the agent left. The command's ``python3`` runs with the interpreter's user-level
hooks off (no user site, no ``PYTHON*`` variables, the working directory last on ``sys.path``;
:func:`rewardhub.sessions.sandbox.test_environment`), so nothing the session planted runs
before the tests; code the tests import from the session (the solution) still runs in their process.

What it does not judge: a sample that names no session, a session that ended (expired, deleted,
lost) or belongs to another key, or a sandbox that failed is ``status: "error"`` with the reason,
never a 0. The session is reached through the service's session host
(:mod:`rewardhub.sessions.host`), so this verifier judges only inside ``rewardhub serve``
(which writes the caller and a grant to judge its sessions into the sample,
:data:`~rewardhub.verifier.CALLER_FIELD`),
and not offline (``rewardhub score``). Never cached: the same sample judges a session that may
have changed.

Two ways to judge (``verify``): ``in_session`` (the default, above) and ``fresh``
(:mod:`rewardhub.sessions.fresh`; the shared contract spells it ``fresh: true``): the session's
processes are stopped, only the declared ``artifacts`` (paths or simple globs) are copied out by
the trusted side (regular files, never through a link, within ``max_artifact_bytes`` each and
``max_artifacts_bytes`` together), and the command runs in a new sandbox with the test files,
where nothing else the session did (a forged report, a planted module or interpreter, a daemon,
an environment) exists. A declared artifact that is missing or refused is the agent's failure, a
0 (``details.artifacts`` says which and why); a copy-out or a fresh sandbox that failed is ``error``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from rewardhub.errors import RewardhubError, VerifierError
from rewardhub.sessions.client import judge_with_grant
from rewardhub.sessions.fresh import (
    ARTIFACT_FILE_BYTES,
    ARTIFACT_TOTAL_BYTES,
    MAX_ARTIFACT_BYTES,
    artifact_paths,
)
from rewardhub.types import Result, Sample
from rewardhub.verifier import CALLER_FIELD, Verifier, VerifierConfig

__all__ = ["SessionTestsVerifier"]

DEFAULT_TEST_TIMEOUT_S = 60.0
MARGIN_S = 2.0
"""Taken off the sample's hard limit for the test command, so the tests' own timeout answers first."""
FRESH_MARGIN_S = 3.0
"""Taken off too in a fresh verification: copying the artifacts out and starting the new sandbox."""


class SessionTestsVerifier(Verifier):
    """Runs a test command on a session's files; 1.0 when it passes."""

    name = "session_tests"
    version = "1"
    kind = "code"
    reads = ("metadata",)
    deterministic = False  # a session's files change between two scorings of one sample
    reads_caller = True

    class Config(VerifierConfig):
        command: str = Field(min_length=1, description="The test command, run on the session's files (exit 0 passes).")
        files: dict[str, str] = Field(
            default_factory=dict, description="Test files written read-only beside the session's first."
        )
        verify: Literal["in_session", "fresh"] | None = Field(
            None,
            description=(
                "Where the tests run: 'in_session' (on the session's files, its processes stopped) or 'fresh' "
                "(in a new sandbox, on the declared artifacts only). Unset: 'fresh' when artifacts are "
                "declared, else 'in_session'."
            ),
        )
        fresh: bool | None = Field(None, description="The shared contract's spelling: true is verify 'fresh'.")
        artifacts: list[str] = Field(
            default_factory=list,
            description=(
                "What a fresh verification carries out of the session: relative paths, folders or simple globs "
                "(wildcards within one path segment); regular files only."
            ),
        )
        max_artifact_bytes: int = Field(
            ARTIFACT_FILE_BYTES, ge=1, le=MAX_ARTIFACT_BYTES, description="Largest artifact; a larger one earns 0."
        )
        max_artifacts_bytes: int = Field(
            ARTIFACT_TOTAL_BYTES, ge=1, le=MAX_ARTIFACT_BYTES, description="All artifacts together; past it, 0."
        )

        @field_validator("files")
        @classmethod
        def _relative(cls, files: dict[str, str]) -> dict[str, str]:
            for path in files:
                if not path or path.startswith("/") or ".." in path.split("/"):
                    raise ValueError(f"test file paths must be relative, inside the session: {path!r}")
            return files

        @field_validator("artifacts")
        @classmethod
        def _artifacts(cls, artifacts: list[str]) -> list[str]:
            return artifact_paths(artifacts)

        @model_validator(mode="after")
        def _one_mode(self) -> SessionTestsVerifier.Config:
            if self.fresh is not None and self.verify is not None and self.fresh != (self.verify == "fresh"):
                raise ValueError(f"fresh: {self.fresh} contradicts verify: {self.verify!r}")
            if self.mode == "fresh" and not self.artifacts:
                raise ValueError("a fresh verification needs artifacts: the paths the tests read from the session")
            if self.mode == "in_session" and self.artifacts:
                raise ValueError("artifacts are carried only by a fresh verification (verify: 'fresh')")
            return self

        @property
        def mode(self) -> str:
            """``fresh`` or ``in_session``, as :attr:`verify`, :attr:`fresh` and :attr:`artifacts` say."""
            if self.verify is not None:
                return self.verify
            if self.fresh is not None:
                return "fresh" if self.fresh else "in_session"
            return "fresh" if self.artifacts else "in_session"

    def score(self, sample: Sample, config: Config) -> Result:
        session = sample.metadata.get("session")
        if not isinstance(session, str) or not session:
            raise VerifierError("the sample names no session: metadata.session must be a session id")
        given = sample.metadata.get(CALLER_FIELD)
        if not isinstance(given, dict):
            raise VerifierError("session_tests judges only through rewardhub serve's /v1/score and /v1/jobs")
        limit = config.timeout_s or DEFAULT_TEST_TIMEOUT_S + MARGIN_S
        try:
            fresh = config.mode == "fresh"
            result = judge_with_grant(
                session,
                given,
                config.command,
                max(1.0, limit - MARGIN_S - (FRESH_MARGIN_S if fresh else 0.0)),
                config.files,
                config.artifacts if fresh else None,
                config.max_artifact_bytes,
                config.max_artifacts_bytes,
            )
        except RewardhubError as exc:  # lost, expired, another key's, busy, a stale grant: no judgement, and why
            raise VerifierError(f"session_tests: {exc.message}") from None
        details = {"verdict": result.verdict, "exit_code": result.exit_code, "stderr": result.stderr[-2000:]}
        details["verification"] = config.mode
        if "artifacts" in result.details:
            details["artifacts"] = result.details["artifacts"]
        if result.verdict == "sandbox_error":
            message = result.details.get("message") or "the sandbox failed"
            return Result(
                score=config.failure_score, status="error", error=f"session_tests: {message}", details=details
            )
        return Result(score=float(result.ok), details=details, elapsed_ms=result.elapsed_ms)
