"""What the service asks of its sessions, wherever they live: the one :class:`Sessions` protocol.

Three implementations hold a service's sessions, and the routes, the ORS surface and the score
pipeline must not know which one they have:

| implementation | where the sessions live |
| --- | --- |
| :class:`~rewardhub.sessions.local.LocalSessions` | a manager in this process |
| :class:`~rewardhub.sessions.client.SessionClient` | the ``rewardhub serve`` process above ``--api-workers N`` |
| :class:`~rewardhub.execution.celery_sessions.CelerySessions` | one session worker per session (``execution: celery``) |

Each declares the protocol (subclasses it), so a type checker holds it to these signatures, and
``tests/sessions/test_sessions_protocol.py`` checks at run time that their parameters are these.
Answers are plain JSON values (a session's description as
:meth:`~rewardhub.sessions.manager.LiveSession.describe` writes it) or a
:class:`~rewardhub.sandbox.verdicts.RunResult`; errors are those of :mod:`rewardhub.sessions.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..sandbox.verdicts import RunResult
from .fresh import ARTIFACT_FILE_BYTES, ARTIFACT_TOTAL_BYTES

__all__ = ["OPERATIONS", "Sessions"]

OPERATIONS: tuple[str, ...] = (
    "create",
    "get",
    "find",
    "list",
    "run",
    "run_tests",
    "run_tests_fresh",
    "delete",
    "describe",
    "stats",
    "close",
    "grant",
)
"""The protocol's methods: the eleven operations, then the grant."""


@runtime_checkable
class Sessions(Protocol):
    """The session operations of one service, answered by whichever process holds each session.

    ``owner`` is always the digest of the API key the route checked
    (:func:`rewardhub.sessions.manager.key_owner`): another key's session answers as an unknown one."""

    def create(
        self,
        owner: str,
        runtime: str,
        files: Mapping[str, str],
        limits: Mapping[str, Any] | None,
        ttl_s: float | None,
        tags: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new session's description. ``limits``: :class:`~rewardhub.sessions.sandbox.SessionLimits`'
        fields as JSON (an unset ``lifetime_s`` is the host's largest); ``tags``: what a protocol served
        on sessions keeps with one, found again by :meth:`find`."""
        ...

    def get(self, session_id: str, owner: str) -> dict[str, Any]:
        """The session's description (404, 410 when it ended)."""
        ...

    def find(self, owner: str, tag: str, value: Any) -> dict[str, Any] | None:
        """The owner's live session whose ``tag`` is ``value``, if any."""
        ...

    def list(self, owner: str) -> list[dict[str, Any]]:
        """The owner's live sessions."""
        ...

    def run(self, session_id: str, owner: str, request: dict[str, Any], timeout_s: float | None) -> RunResult:
        """One call (``code`` or ``command``, with ``stdin``) in the session, state kept."""
        ...

    def run_tests(
        self, session_id: str, owner: str, command: str, timeout_s: float, files: Mapping[str, str] | None = None
    ) -> RunResult:
        """A test command on the session's files, in a fresh program (its interpreter ends)."""
        ...

    def run_tests_fresh(
        self,
        session_id: str,
        owner: str,
        command: str,
        timeout_s: float,
        files: Mapping[str, str] | None,
        artifacts: Sequence[str],
        max_file_bytes: int = ARTIFACT_FILE_BYTES,
        max_total_bytes: int = ARTIFACT_TOTAL_BYTES,
    ) -> RunResult:
        """A test command in a new sandbox, on the session's declared ``artifacts`` only, copied out
        after every process of the session stopped (:mod:`rewardhub.sessions.fresh`)."""
        ...

    def delete(self, session_id: str, owner: str) -> None:
        """End the session now (later calls answer 404)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Live sessions by key (``live``, ``created``, ``by_key``), for the operator page."""
        ...

    def stats(self) -> dict[str, Any] | None:
        """The host's counts behind ``/metrics``' session rows; None while no session was ever opened."""
        ...

    def close(self) -> None:
        """Let go of what these sessions hold in this process (threads, sockets, the manager)."""
        ...

    def grant(self, owner: str) -> dict[str, Any] | None:
        """What a sample judged in one of ``owner``'s sessions carries, so the verifier that judges it,
        wherever it runs, reaches that session and no other caller's; None where no verifier can
        reach these sessions (a manager no host serves)."""
        ...
