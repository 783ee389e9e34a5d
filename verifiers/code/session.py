"""A sample judged in a live session of the caller's (``session_id``): its tests run inside that
session's sandbox, against a fork of the session's interpreter (see :mod:`.verifier`, "In a
session"), through :mod:`rewardhub.sessions`, which checks that the caller owns the session.
"""

from __future__ import annotations

import time
from typing import Any

from rewardhub.errors import RewardhubError, VerifierError
from rewardhub.sandbox import CheckerFailed, SandboxError, SandboxUnavailable
from rewardhub.sandbox import language as find_language
from rewardhub.sessions import code_tests_with_grant
from rewardhub.types import Result, Sample
from rewardhub.verifier import CALLER_FIELD

from .checkers import run_checker
from .config import Config, budget_s, stop_on_failure
from .outcomes import judged, result, skipped
from .testcases import CheckerSpec, TestCase

__all__ = ["score_in_session"]


def score_in_session(
    sample: Sample,
    session_id: str,
    code: str,
    tag: str | None,
    tests: list[TestCase],
    specs: list[dict[str, Any]],
    checker: CheckerSpec | None,
    config: Config,
) -> Result:
    """The tests in a live session of the caller's, each in a fork of its interpreter (its
    variables and files, the response's code run first when it has some): see :mod:`.verifier`.
    ``specs``: what the session's sandbox learns of each test, never its expected value."""
    if config.language not in ("python", "auto") or (config.language == "auto" and tag not in (None, "python", "py")):
        raise VerifierError(f"tests run in a session are Python's: not {tag or config.language!r}")
    given = sample.metadata.get(CALLER_FIELD)
    if not isinstance(given, dict):
        raise VerifierError(
            f"session {session_id!r}: a sample judged in a session is scored only through rewardhub serve's "
            "/v1/score, /v1/jobs and /get_reward"
        )
    deadline = time.monotonic() + budget_s(config)
    try:
        runs = code_tests_with_grant(
            session_id, given, code, specs, config.test_timeout_s, budget_s(config), stop_on_failure(config)
        )
    except RewardhubError as exc:  # not found or deleted (404), expired or lost (410), another key's, busy
        raise VerifierError(
            f"session {session_id!r} cannot be judged: {exc.error_type} ({exc.status_code}): {exc.message}"
        ) from None
    outcomes = []
    for test, run in zip(tests, runs, strict=True):
        if run is None:
            outcomes.append(skipped(None))
        elif run.verdict == "compile_error":
            outcomes.append(skipped(run))
        else:
            outcomes.append(judged(test, run, config, checker is not None))
    if checker is not None:
        try:
            run_checker(checker, tests, outcomes, config, deadline)
        except CheckerFailed as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="checker_error")
        except (SandboxError, SandboxUnavailable) as exc:
            return Result.failed(exc.message, score=config.failure_score, verdict="sandbox_error")
    return result(outcomes, {"session_id": session_id}, find_language("python"), config)
