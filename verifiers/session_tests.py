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
"""

from __future__ import annotations

from pydantic import Field, field_validator

from rewardhub.errors import RewardhubError, VerifierError
from rewardhub.sessions.client import judge_with_grant
from rewardhub.types import Result, Sample
from rewardhub.verifier import CALLER_FIELD, Verifier, VerifierConfig

__all__ = ["SessionTestsVerifier"]

DEFAULT_TEST_TIMEOUT_S = 60.0
MARGIN_S = 2.0
"""Taken off the sample's hard limit for the test command, so the tests' own timeout answers first."""


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

        @field_validator("files")
        @classmethod
        def _relative(cls, files: dict[str, str]) -> dict[str, str]:
            for path in files:
                if not path or path.startswith("/") or ".." in path.split("/"):
                    raise ValueError(f"test file paths must be relative, inside the session: {path!r}")
            return files

    def score(self, sample: Sample, config: Config) -> Result:
        session = sample.metadata.get("session")
        if not isinstance(session, str) or not session:
            raise VerifierError("the sample names no session: metadata.session must be a session id")
        given = sample.metadata.get(CALLER_FIELD)
        if not isinstance(given, dict):
            raise VerifierError("session_tests judges only through rewardhub serve's /v1/score and /v1/jobs")
        limit = config.timeout_s or DEFAULT_TEST_TIMEOUT_S + MARGIN_S
        try:
            result = judge_with_grant(session, given, config.command, max(1.0, limit - MARGIN_S), config.files)
        except RewardhubError as exc:  # lost, expired, another key's, busy, a stale grant: no judgement, and why
            raise VerifierError(f"session_tests: {exc.message}") from None
        details = {"verdict": result.verdict, "exit_code": result.exit_code, "stderr": result.stderr[-2000:]}
        if result.verdict == "sandbox_error":
            message = result.details.get("message") or "the sandbox failed"
            return Result(
                score=config.failure_score, status="error", error=f"session_tests: {message}", details=details
            )
        return Result(score=float(result.ok), details=details, elapsed_ms=result.elapsed_ms)
