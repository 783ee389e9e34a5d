"""Exceptions of the sandbox.

    RewardhubError (rewardhub.errors)
    ├── ExecutionError                     503
    │   └── SandboxUnavailable             this machine cannot isolate code (bubblewrap missing,
    │                                      no Docker) and no unsafe backend was chosen
    ├── InvalidRequest                     422
    │   └── UnsupportedLanguage            a language we do not run (or whose tool is missing)
    └── SandboxError                       the sandbox itself failed, not the program: a run that
        │                                  hits it reports the verdict ``sandbox_error``
        └── CheckerFailed                  a special judge gave no judgement (did not build,
                                           crashed, timed out, exited neither 0, 1 nor 2)

A program's own failures (crash, timeout, memory) are never exceptions: they are verdicts.
"""

from __future__ import annotations

from rewardhub.errors import ExecutionError, InvalidRequest, RewardhubError

__all__ = ["CheckerFailed", "SandboxError", "SandboxUnavailable", "UnsupportedLanguage"]


class SandboxError(RewardhubError):
    error_type = "sandbox_error"


class SandboxUnavailable(ExecutionError):
    error_type = "sandbox_unavailable"


class UnsupportedLanguage(InvalidRequest):
    error_type = "unsupported_language"


class CheckerFailed(SandboxError):
    error_type = "checker_error"
