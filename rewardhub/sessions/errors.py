"""How an ended or refused session answers, as API.md has it.

::

    RewardhubError (rewardhub.errors)
    ├── SessionNotFound   404 session_not_found: deleted, never known, or another key's
    ├── SessionLost       410 session_lost: its sandbox died, the service ended it, an earlier run made it
    ├── SessionExpired    410 session_expired: idle past its TTL, or at its hard lifetime
    └── SessionBusy       409 session_busy: a second call while one runs
"""

from __future__ import annotations

from ..errors import RewardhubError

__all__ = ["SessionBusy", "SessionExpired", "SessionLost", "SessionNotFound"]


class SessionNotFound(RewardhubError):
    status_code = 404
    error_type = "session_not_found"


class SessionLost(RewardhubError):
    status_code = 410
    error_type = "session_lost"


class SessionExpired(RewardhubError):
    status_code = 410
    error_type = "session_expired"


class SessionBusy(RewardhubError):
    status_code = 409
    error_type = "session_busy"
