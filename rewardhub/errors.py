"""Exceptions of rewardhub, mapped to HTTP status codes in one place (``rewardhub.api.errors``).

RewardhubError                       500 internal
├── BadRequest                       400 malformed request (JSON syntax, encoding)
├── InvalidRequest                   422 well-formed JSON of the wrong shape
│   └── InvalidConfig                422 a verifier rejected its config
├── UnknownVerifier                  404 no verifier of that name is registered
├── NotFound                         404 unknown job
├── PayloadTooLarge                  413 body or sample count over the server's limits
├── Unauthorized                     401 missing or wrong API key
├── Overloaded                       429 queue full or rate limited (carries retry_after)
├── RegistryError                    start-up only: duplicate names, broken plugins
├── ExecutionError                   503 the execution engine cannot take work
└── VerifierError                    not an HTTP error: one sample's ``status: "error"``
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BadRequest",
    "ExecutionError",
    "InvalidConfig",
    "InvalidRequest",
    "NotFound",
    "Overloaded",
    "PayloadTooLarge",
    "RegistryError",
    "RewardhubError",
    "Unauthorized",
    "UnknownVerifier",
    "VerifierError",
]


class RewardhubError(Exception):
    status_code = 500
    error_type = "internal_error"

    def __init__(self, message: str, detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class BadRequest(RewardhubError):
    status_code = 400
    error_type = "bad_request"


class InvalidRequest(RewardhubError):
    status_code = 422
    error_type = "invalid_request"


class InvalidConfig(InvalidRequest):
    error_type = "invalid_config"


class UnknownVerifier(RewardhubError):
    status_code = 404
    error_type = "unknown_verifier"


class NotFound(RewardhubError):
    status_code = 404
    error_type = "not_found"


class PayloadTooLarge(RewardhubError):
    status_code = 413
    error_type = "payload_too_large"


class Unauthorized(RewardhubError):
    status_code = 401
    error_type = "unauthorized"


class Overloaded(RewardhubError):
    status_code = 429
    error_type = "overloaded"

    def __init__(self, message: str, retry_after: float = 1.0, detail: Any = None) -> None:
        super().__init__(message, detail)
        self.retry_after = retry_after


class RegistryError(RewardhubError):
    error_type = "registry_error"


class ExecutionError(RewardhubError):
    status_code = 503
    error_type = "execution_unavailable"


class VerifierError(RewardhubError):
    """Raised inside ``score`` when a sample cannot be judged (unparseable gold, bad reference).

    The execution layer turns it into ``status: "error"`` with this message for that one sample.
    """

    error_type = "verifier_error"
