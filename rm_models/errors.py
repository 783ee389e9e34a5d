"""Exceptions of the model-based verifiers.

Every one of them is a :class:`~rewardhub.errors.VerifierError`, so the execution layer reports
it as that sample's ``status: "error"`` with the message, never as a reward of 0::

    rewardhub.errors.VerifierError
    ├── BackendError               a model or endpoint could not be loaded or did not answer
    │   └── UnsupportedOperation   this backend cannot do what the verifier asks (a PRM over HTTP)
    ├── InputTooLong               the sample is longer than the configured max_length in tokens
    └── VerdictError               a judge's output did not parse strictly into a verdict
"""

from __future__ import annotations

from rewardhub.errors import VerifierError

__all__ = ["BackendError", "InputTooLong", "UnsupportedOperation", "VerdictError"]


class BackendError(VerifierError):
    error_type = "backend_error"


class UnsupportedOperation(BackendError):
    error_type = "unsupported_operation"


class InputTooLong(VerifierError):
    """Truncating would silently change what is scored, so an over-long sample is an error."""

    error_type = "input_too_long"


class VerdictError(VerifierError):
    """The judge answered, but not in a form we accept; guessing a verdict is how judges get fooled."""

    error_type = "verdict_error"
