"""Sessions: stateful sandboxes that live across calls, for tool-using agents (``/v1/sessions``).

A session is a sandbox of its own, kept warm with a kernel that holds the session's interpreter
state, owned by the API key that made it and by the one process that started it. This package
sits on :mod:`rewardhub.sandbox` (whose ``inside/`` keeps the kernel and judge that ship into the
sandbox as source) and under the API, which reaches it through one protocol.

A tour, bottom up:

- ``settings``: the host limits (``REWARDHUB_SESSION_*``); ``errors``: 404/409/410 of ended sessions;
- ``sandbox``: one session's sandbox and its kernel; ``manager``: every live session of a process,
  their limits, the reaper;
- ``protocol``: :class:`Sessions`, the operations the service asks of its sessions, and their three
  implementations: ``local`` (:class:`LocalSessions`, a manager used in place), ``client``
  (:class:`SessionClient`, asking a ``host`` in another process) and, with ``execution: celery``,
  :class:`rewardhub.execution.celery_sessions.CelerySessions` (it lives with the Celery engine);
- ``fresh``: verification in a fresh sandbox, a session judged from its declared artifacts only
  (copied out after its processes stopped, tested in a new sandbox);
- ``host``: :class:`SessionHost`, the sessions served to a service's other processes on a unix
  socket; ``wire``: how answers and errors cross it; ``grants``: what lets a verifier judge one
  caller's sessions.
"""

from .client import SessionClient, code_tests_with_grant, judge_with_grant
from .errors import SessionBusy, SessionExpired, SessionLost, SessionNotFound
from .grants import GRANT_S, grant
from .host import SessionHost
from .local import LocalSessions
from .manager import RUNTIMES, LiveSession, SessionManager, SessionStats, key_owner
from .protocol import Sessions
from .sandbox import SessionLimits, SessionSandbox
from .settings import SessionSettings
from .wire import SOCKET_ENV, TOKEN_ENV

__all__ = [
    "GRANT_S",
    "RUNTIMES",
    "SOCKET_ENV",
    "TOKEN_ENV",
    "LiveSession",
    "LocalSessions",
    "SessionBusy",
    "SessionClient",
    "SessionExpired",
    "SessionHost",
    "SessionLimits",
    "SessionLost",
    "SessionManager",
    "SessionNotFound",
    "SessionSandbox",
    "SessionSettings",
    "SessionStats",
    "Sessions",
    "code_tests_with_grant",
    "grant",
    "judge_with_grant",
    "key_owner",
]
