"""One place that holds a service's sessions, reachable from every process of that service.

A session is a sandbox kept alive by the process that started it, so the processes that serve its
calls must all reach that one process: the API workers of ``rewardhub serve --api-workers N`` (a
session made through one is used through any other) and the worker processes where the
``session_tests`` verifier judges a session inside the score pipeline. :class:`SessionHost` is that
process's side: a :class:`~rewardhub.sandbox.sessions.SessionManager` (made on first use), behind a
small JSON-over-HTTP server on an abstract unix socket. :class:`SessionClient` is everyone else's
side, with the same methods as :class:`LocalSessions` (the manager used in place, by the process
that holds it), so a route does not know which one it has.

Why an abstract socket with a token: it leaves no file behind when the service is killed (kill -9
must leave nothing), sandboxes cannot reach it (each has a network namespace of its own), and the
token (inherited by the API workers in :data:`TOKEN_ENV`, never given to a sandbox) keeps other
local users out. The host trusts the ``owner`` its callers send: they are the
service's own processes, which derive it from the caller's API key.

Errors cross the socket as their ``error_type`` and come out as the same exception classes, so a
410 ``session_lost`` through another worker reads exactly as through the one holding the session.

A verifier that judges a session (``session_tests``) runs in a pool worker, forked from a fork
server that may have started before this host existed, so it cannot count on the environment: the
service hands it a :func:`grant` in the sample instead, the host's address and a ticket (an HMAC of
the caller and an expiry under the host's token) that lets its holder judge that caller's sessions,
and nothing else, until it expires.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socketserver
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx

from rewardhub.errors import InvalidRequest, RewardhubError
from rewardhub.sandbox.errors import SandboxError
from rewardhub.sandbox.session_sandbox import SessionLimits
from rewardhub.sandbox.session_wire import answer_of, error_of, raised, result_of
from rewardhub.sandbox.sessions import SessionManager, SessionSettings
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.verdicts import RunResult

__all__ = [
    "SOCKET_ENV",
    "TOKEN_ENV",
    "LocalSessions",
    "SessionClient",
    "SessionHost",
    "code_tests_with_grant",
    "grant",
    "judge_with_grant",
]

SOCKET_ENV = "_REWARDHUB_SESSION_SOCKET"
"""The host's socket address, for the service's own processes (no ``REWARDHUB_`` prefix: not a setting)."""
TOKEN_ENV = "_REWARDHUB_SESSION_TOKEN"
TOKEN_HEADER = "x-session-host-token"
MAX_MESSAGE = 256 << 20
GRANT_S = 6 * 3600.0
"""How long a grant judges: a job may wait in the queue, a replayed old sample must not judge today."""


def _ticket(token: str, owner: str, expires: float) -> str:
    return hmac.new(token.encode(), f"{owner}|{expires!r}".encode(), hashlib.sha256).hexdigest()


def grant(address: str, token: str, owner: str, now: float | None = None) -> dict[str, Any]:
    """What a verifier needs to judge ``owner``'s sessions on the host at ``address``, for a while."""
    expires = round((time.time() if now is None else now) + GRANT_S, 3)
    return {"owner": owner, "host": address, "expires": expires, "ticket": _ticket(token, owner, expires)}


def _limits(manager: SessionManager, body: Mapping[str, Any] | None) -> SessionLimits:
    """A session's limits from their JSON; an unset lifetime is the host's largest."""
    fields = dict(body or {})
    if fields.get("lifetime_s") is None:
        fields["lifetime_s"] = manager.settings.max_lifetime_s
    return SessionLimits(**fields)


class LocalSessions:
    """The session operations on a manager of this process; answers are plain JSON values."""

    def __init__(self, manager: SessionManager | Callable[[], SessionManager]) -> None:
        self._made = manager if isinstance(manager, SessionManager) else None
        self._make = None if self._made is not None else manager
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

    def close(self) -> None:
        if self._made is not None:
            self._made.close()


class SessionHost:
    """The sessions of a service, served to its other processes on an abstract unix socket.

    The socket opens when first needed (:meth:`export`, :meth:`grant`): an app that never judges a
    session nor has API workers above it holds no server thread."""

    def __init__(self, settings: SessionSettings | None = None, sandbox: SandboxSettings | None = None) -> None:
        self.local = LocalSessions(lambda: SessionManager(settings or SessionSettings(), sandbox))
        self.address = f"@rewardhub-sessions-{os.getpid()}-{secrets.token_hex(8)}"
        """The socket's name, ``@`` standing for the abstract namespace's leading NUL (which no
        environment variable can hold)."""
        self.token = secrets.token_hex(16)
        self._server: _Server | None = None
        self._lock = threading.Lock()

    def serve(self) -> None:
        """Open the socket, if it is not open yet."""
        with self._lock:
            if self._server is not None:
                return
            server = _Server(_socket_path(self.address), _Handler)
            server.host = self
            threading.Thread(target=server.serve_forever, name="session-host", daemon=True).start()
            self._server = server

    def export(self) -> None:
        """Name this host in the environment the API workers that ``rewardhub serve`` starts inherit."""
        self.serve()
        os.environ[SOCKET_ENV] = self.address
        os.environ[TOKEN_ENV] = self.token

    def handle(self, op: str, body: dict[str, Any]) -> Any:
        local = self.local
        if op == "create":
            return local.create(
                body["owner"], body["runtime"], body["files"], body.get("limits"), body.get("ttl_s"), body.get("tags")
            )
        if op == "get":
            return local.get(body["id"], body["owner"])
        if op == "find":
            return local.find(body["owner"], body["tag"], body["value"])
        if op == "list":
            return local.list(body["owner"])
        if op == "run":
            return answer_of(local.run(body["id"], body["owner"], body["request"], body["timeout_s"]))
        if op == "run_tests":
            result = local.run_tests(body["id"], body["owner"], body["command"], body["timeout_s"], body.get("files"))
            return answer_of(result)
        if op == "delete":
            local.delete(body["id"], body["owner"])
            return None
        if op == "judge":  # a verifier's: its grant, not the token, says whose sessions it may judge
            owner = self._granted(body["grant"])
            timeout_s = body["timeout_s"]  # the samples of one session take turns, each waiting up to its time
            return answer_of(
                local.run_tests(body["id"], owner, body["command"], timeout_s, body.get("files"), timeout_s)
            )
        if op == "judge_code":  # the code verifier's tests in a session: its grant says whose
            owner = self._granted(body["grant"])
            runs = local.run_code_tests(body["id"], owner, body)
            return [None if run is None else answer_of(run) for run in runs]
        if op == "describe":
            return local.describe()
        if op == "stats":
            return local.stats()
        raise InvalidRequest(f"unknown session operation {op!r}")

    def grant(self, owner: str) -> dict[str, Any]:
        self.serve()  # a verifier in a pool worker is about to ask
        return grant(self.address, self.token, owner)

    def _granted(self, given: Mapping[str, Any]) -> str:
        owner, expires, ticket = str(given["owner"]), float(given["expires"]), str(given["ticket"])
        if not hmac.compare_digest(_ticket(self.token, owner, expires), ticket):
            raise InvalidRequest("the sample's session grant is not this service's (another run of it made it?)")
        if time.time() > expires:
            raise InvalidRequest("the sample's session grant expired: score it again")
        return owner

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        self.local.close()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    host: SessionHost


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        host = self.server.host
        op = self.path.strip("/")
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_MESSAGE:
            self._send(413, {"error": {"type": "payload_too_large", "message": "message too large"}})
            return
        body = self.rfile.read(length)
        if op not in ("judge", "judge_code") and not hmac.compare_digest(
            self.headers.get(TOKEN_HEADER, ""), host.token
        ):
            self._send(401, {"error": {"type": "unauthorized", "message": "wrong session host token"}})
            return
        try:
            answer = host.handle(op, json.loads(body or b"{}"))
        except RewardhubError as exc:
            self._send(exc.status_code, {"error": error_of(exc)})
            return
        except (KeyError, TypeError, ValueError) as exc:
            self._send(400, {"error": {"type": "bad_request", "message": f"{type(exc).__name__}: {exc}"}})
            return
        self._send(200, {"answer": answer})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def address_string(self) -> str:  # a unix socket's peer has no address
        return "session-host-client"

    def log_message(self, format: str, *args: Any) -> None:  # the service logs its own requests
        return


class SessionClient:
    """The operations of :class:`LocalSessions`, asked of a :class:`SessionHost` in another process."""

    def __init__(self, address: str, token: str | None, timeout_s: float = 330.0) -> None:
        """``token`` None: a client that may only ``judge`` with a grant."""
        self.address = address
        self.token = token
        self._http = httpx.Client(
            transport=httpx.HTTPTransport(uds=_socket_path(address)),
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

    def judge_code(self, session_id: str, given: Mapping[str, Any], body: Mapping[str, Any]) -> list[RunResult | None]:
        answers = self._ask("judge_code", id=session_id, grant=dict(given), **body)
        return [None if answer is None else result_of(answer) for answer in answers]

    def describe(self) -> dict[str, Any]:
        return self._ask("describe")

    def stats(self) -> dict[str, Any] | None:
        return self._ask("stats")

    def close(self) -> None:
        self._http.close()


def _socket_path(address: str) -> str:
    return "\0" + address[1:] if address.startswith("@") else address


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
    session_id: str, given: Mapping[str, Any], command: str, timeout_s: float, files: Mapping[str, str]
) -> RunResult:
    """Run a session's tests with a grant the service wrote into a sample (see the module's docstring)."""
    address = given.get("host")
    if not isinstance(address, str) or not address:
        raise InvalidRequest("the sample's session grant names no session host")
    client = SessionClient(address, None)
    try:
        return client.judge(session_id, given, command, timeout_s, files)
    finally:
        client.close()
