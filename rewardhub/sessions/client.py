"""The session operations, asked of a :class:`~rewardhub.sessions.host.SessionHost` in another process.

An API worker of ``rewardhub serve --api-workers N`` holds one :class:`SessionClient` with the
host's token; a verifier judging a session in a pool worker makes one without a token, which may
only judge, with the grant its sample carries (:func:`judge_with_grant`, :func:`code_tests_with_grant`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ..errors import InvalidRequest
from ..sandbox.errors import SandboxError
from ..sandbox.verdicts import RunResult
from .fresh import ARTIFACT_FILE_BYTES, ARTIFACT_TOTAL_BYTES
from .grants import grant
from .protocol import Sessions
from .wire import TOKEN_HEADER, raised, result_of, socket_path

__all__ = ["SessionClient", "code_tests_with_grant", "judge_with_grant"]


class SessionClient(Sessions):
    """The operations of :class:`LocalSessions`, asked of a :class:`SessionHost` in another process."""

    def __init__(self, address: str, token: str | None, timeout_s: float = 330.0) -> None:
        """``token`` None: a client that may only ``judge`` with a grant."""
        self.address = address
        self.token = token
        self._http = httpx.Client(
            transport=httpx.HTTPTransport(uds=socket_path(address)),
            base_url="http://session-host",
            headers={TOKEN_HEADER: token} if token else {},
            timeout=timeout_s,
        )

    def _ask(self, op: str, **body: Any) -> Any:
        try:
            response = self._http.post(f"/{op}", json=body)
        except httpx.TransportError as exc:
            raise SandboxError(f"the service's session host cannot be reached ({type(exc).__name__}: {exc})") from None
        payload = response.json()
        if response.status_code == 200:
            return payload["answer"]
        raise raised(payload.get("error") or {}, f"session host answered {response.status_code}")

    def create(
        self,
        owner: str,
        runtime: str,
        files: Mapping[str, str],
        limits: Mapping[str, Any] | None,
        ttl_s: float | None,
        tags: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        body = {"owner": owner, "runtime": runtime, "files": dict(files), "limits": limits, "ttl_s": ttl_s}
        return self._ask("create", **body, tags=dict(tags or {}))

    def get(self, session_id: str, owner: str) -> dict[str, Any]:
        return self._ask("get", id=session_id, owner=owner)

    def find(self, owner: str, tag: str, value: Any) -> dict[str, Any] | None:
        return self._ask("find", owner=owner, tag=tag, value=value)

    def list(self, owner: str) -> list[dict[str, Any]]:
        return self._ask("list", owner=owner)

    def run(self, session_id: str, owner: str, request: dict[str, Any], timeout_s: float | None) -> RunResult:
        return result_of(self._ask("run", id=session_id, owner=owner, request=request, timeout_s=timeout_s))

    def run_tests(
        self, session_id: str, owner: str, command: str, timeout_s: float, files: Mapping[str, str] | None = None
    ) -> RunResult:
        body = {
            "id": session_id,
            "owner": owner,
            "command": command,
            "timeout_s": timeout_s,
            "files": dict(files or {}),
        }
        return result_of(self._ask("run_tests", **body))

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
        body = _fresh_body(command, timeout_s, files, artifacts, max_file_bytes, max_total_bytes)
        return result_of(self._ask("run_tests_fresh", id=session_id, owner=owner, **body))

    def delete(self, session_id: str, owner: str) -> None:
        self._ask("delete", id=session_id, owner=owner)

    def grant(self, owner: str) -> dict[str, Any]:
        assert self.token is not None
        return grant(self.address, self.token, owner)

    def judge(
        self, session_id: str, given: Mapping[str, Any], command: str, timeout_s: float, files: Mapping[str, str]
    ) -> RunResult:
        body = {
            "id": session_id,
            "grant": dict(given),
            "command": command,
            "timeout_s": timeout_s,
            "files": dict(files),
        }
        return result_of(self._ask("judge", **body))

    def judge_fresh(
        self,
        session_id: str,
        given: Mapping[str, Any],
        command: str,
        timeout_s: float,
        files: Mapping[str, str],
        artifacts: Sequence[str],
        max_file_bytes: int = ARTIFACT_FILE_BYTES,
        max_total_bytes: int = ARTIFACT_TOTAL_BYTES,
    ) -> RunResult:
        body = _fresh_body(command, timeout_s, files, artifacts, max_file_bytes, max_total_bytes)
        return result_of(self._ask("judge_fresh", id=session_id, grant=dict(given), **body))

    def judge_code(self, session_id: str, given: Mapping[str, Any], body: Mapping[str, Any]) -> list[RunResult | None]:
        answers = self._ask("judge_code", id=session_id, grant=dict(given), **body)
        return [None if answer is None else result_of(answer) for answer in answers]

    def describe(self) -> dict[str, Any]:
        return self._ask("describe")

    def stats(self) -> dict[str, Any] | None:
        return self._ask("stats")

    def close(self) -> None:
        self._http.close()


def code_tests_with_grant(
    session_id: str,
    given: Mapping[str, Any],
    program: str,
    tests: list[dict[str, Any]],
    test_timeout_s: float,
    budget_s: float,
    stop_on_failure: bool,
) -> list[RunResult | None]:
    """Run the ``code`` verifier's tests in a session with a grant the service wrote into a sample."""
    address = given.get("host")
    if not isinstance(address, str) or not address:
        raise InvalidRequest("the sample's session grant names no session host")
    body = {
        "program": program,
        "tests": tests,
        "test_timeout_s": test_timeout_s,
        "budget_s": budget_s,
        "stop_on_failure": stop_on_failure,
    }
    client = SessionClient(address, None)
    try:
        return client.judge_code(session_id, given, body)
    finally:
        client.close()


def judge_with_grant(
    session_id: str,
    given: Mapping[str, Any],
    command: str,
    timeout_s: float,
    files: Mapping[str, str],
    artifacts: Sequence[str] | None = None,
    max_file_bytes: int = ARTIFACT_FILE_BYTES,
    max_total_bytes: int = ARTIFACT_TOTAL_BYTES,
) -> RunResult:
    """Run a session's tests with a grant the service wrote into a sample (see the module's docstring):
    in the session, or, with ``artifacts`` (not None), in a fresh sandbox on those artifacts alone."""
    address = given.get("host")
    if not isinstance(address, str) or not address:
        raise InvalidRequest("the sample's session grant names no session host")
    client = SessionClient(address, None)
    try:
        if artifacts is None:
            return client.judge(session_id, given, command, timeout_s, files)
        return client.judge_fresh(
            session_id, given, command, timeout_s, files, artifacts, max_file_bytes, max_total_bytes
        )
    finally:
        client.close()


def _fresh_body(
    command: str,
    timeout_s: float,
    files: Mapping[str, str] | None,
    artifacts: Sequence[str],
    max_file_bytes: int,
    max_total_bytes: int,
) -> dict[str, Any]:
    return {
        "command": command,
        "timeout_s": timeout_s,
        "files": dict(files or {}),
        "artifacts": list(artifacts),
        "max_file_bytes": max_file_bytes,
        "max_total_bytes": max_total_bytes,
    }
