"""The session operations on a manager of this process, answered as plain JSON values.

What the process that holds the sessions uses in place: the service's own app when it hosts them,
and the :class:`~rewardhub.sessions.host.SessionHost` that answers the other processes' clients.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..sandbox.verdicts import RunResult
from .fresh import ARTIFACT_FILE_BYTES, ARTIFACT_TOTAL_BYTES
from .manager import SessionManager
from .protocol import Sessions
from .sandbox import SessionLimits

__all__ = ["LocalSessions"]


def _limits(manager: SessionManager, body: Mapping[str, Any] | None) -> SessionLimits:
    """A session's limits from their JSON; an unset lifetime is the host's largest."""
    fields = dict(body or {})
    if fields.get("lifetime_s") is None:
        fields["lifetime_s"] = manager.settings.max_lifetime_s
    return SessionLimits(**fields)


class LocalSessions(Sessions):
    """The session operations on a manager of this process; answers are plain JSON values."""

    def __init__(
        self,
        manager: SessionManager | Callable[[], SessionManager],
        granter: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        """``manager``: the manager, or how to make it on first use; ``granter``: the grants of the
        host that serves these sessions to verifiers (:meth:`SessionHost.grant`), None when none does."""
        self._made = manager if isinstance(manager, SessionManager) else None
        self._make = None if self._made is not None else manager
        self._granter = granter
        self._lock = threading.Lock()

    @property
    def manager(self) -> SessionManager:
        if self._made is None:
            with self._lock:
                if self._made is None:
                    assert self._make is not None
                    self._made = self._make()
        return self._made

    @property
    def opened(self) -> bool:
        """Whether any session operation ran yet (an app that never opens a session starts no sandbox)."""
        return self._made is not None

    def create(
        self,
        owner: str,
        runtime: str,
        files: Mapping[str, str],
        limits: Mapping[str, Any] | None,
        ttl_s: float | None,
        tags: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        manager = self.manager
        return manager.create(owner, runtime, files, _limits(manager, limits), ttl_s, tags).describe()

    def get(self, session_id: str, owner: str) -> dict[str, Any]:
        return self.manager.get(session_id, owner).describe()

    def find(self, owner: str, tag: str, value: Any) -> dict[str, Any] | None:
        found = self.manager.find(owner, tag, value)
        return found.describe() if found is not None else None

    def list(self, owner: str) -> list[dict[str, Any]]:
        return [session.describe() for session in self.manager.list(owner)]

    def run(self, session_id: str, owner: str, request: dict[str, Any], timeout_s: float | None) -> RunResult:
        return self.manager.run(session_id, owner, request, timeout_s)

    def run_tests(
        self,
        session_id: str,
        owner: str,
        command: str,
        timeout_s: float,
        files: Mapping[str, str] | None = None,
        wait_s: float = 0.0,
    ) -> RunResult:
        return self.manager.run_tests(session_id, owner, command, timeout_s, files, wait_s)

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
        wait_s: float = 0.0,
    ) -> RunResult:
        return self.manager.run_tests_fresh(
            session_id, owner, command, timeout_s, files, artifacts, max_file_bytes, max_total_bytes, wait_s
        )

    def run_code_tests(self, session_id: str, owner: str, body: Mapping[str, Any]) -> list[RunResult | None]:
        return self.manager.run_code_tests(
            session_id,
            owner,
            str(body["program"]),
            list(body["tests"]),
            float(body["test_timeout_s"]),
            float(body["budget_s"]),
            bool(body.get("stop_on_failure")),
        )

    def delete(self, session_id: str, owner: str) -> None:
        self.manager.delete(session_id, owner)

    def describe(self) -> dict[str, Any]:
        """Live sessions by key, for the operator page (which asks every few seconds: that alone starts no sandbox)."""
        return self.manager.describe() if self.opened else {"live": 0, "created": 0, "by_key": {}}

    def stats(self) -> dict[str, Any] | None:
        """The host's counts; None while no session was ever asked for (no manager was made)."""
        return self.manager.stats() if self.opened else None

    def grant(self, owner: str) -> dict[str, Any] | None:
        return self._granter(owner) if self._granter is not None else None

    def close(self) -> None:
        if self._made is not None:
            self._made.close()
