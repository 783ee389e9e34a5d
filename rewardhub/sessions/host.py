"""One place that holds a service's sessions, reachable from every process of that service.

A session is a sandbox kept alive by the process that started it, so the processes that serve its
calls must all reach that one process: the API workers of ``rewardhub serve --api-workers N`` (a
session made through one is used through any other) and the worker processes where the
``session_tests`` verifier judges a session inside the score pipeline. :class:`SessionHost` is that
process's side: a :class:`~rewardhub.sessions.manager.SessionManager` (made on first use), behind a
small JSON-over-HTTP server on an abstract unix socket. :class:`~rewardhub.sessions.client.SessionClient`
is everyone else's side; both it and :class:`~rewardhub.sessions.local.LocalSessions` (the manager used
in place, by the process that holds it) are :class:`~rewardhub.sessions.protocol.Sessions`, so a route
does not know which one it has.

Why an abstract socket with a token: it leaves no file behind when the service is killed (kill -9
must leave nothing), sandboxes cannot reach it (each has a network namespace of its own), and the
token (inherited by the API workers in :data:`~rewardhub.sessions.wire.TOKEN_ENV`, never given to a sandbox) keeps other
local users out. The host trusts the ``owner`` its callers send: they are the
service's own processes, which derive it from the caller's API key.

Errors cross the socket as their ``error_type`` and come out as the same exception classes, so a
410 ``session_lost`` through another worker reads exactly as through the one holding the session.

A verifier that judges a session (``session_tests``) runs in a pool worker, forked from a fork
server that may have started before this host existed, so it cannot count on the environment: the
service hands it a grant in the sample instead (:mod:`rewardhub.sessions.grants`), the host's address and a ticket (an HMAC of
the caller and an expiry under the host's token) that lets its holder judge that caller's sessions,
and nothing else, until it expires.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import socketserver
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..errors import InvalidRequest, RewardhubError
from ..sandbox.settings import SandboxSettings
from .grants import grant, granted_owner
from .local import LocalSessions
from .manager import SessionManager
from .settings import SessionSettings
from .wire import MAX_MESSAGE, SOCKET_ENV, TOKEN_ENV, TOKEN_HEADER, answer_of, error_of, socket_path

__all__ = ["SessionHost"]


class SessionHost:
    """The sessions of a service, served to its other processes on an abstract unix socket.

    The socket opens when first needed (:meth:`export`, :meth:`grant`): an app that never judges a
    session nor has API workers above it holds no server thread."""

    def __init__(self, settings: SessionSettings | None = None, sandbox: SandboxSettings | None = None) -> None:
        self.local = LocalSessions(lambda: SessionManager(settings or SessionSettings(), sandbox), granter=self.grant)
        """The sessions, used in place by this process (their grants are this host's)."""
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
            server = _Server(socket_path(self.address), _Handler)
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
        if op == "run_tests_fresh":
            return answer_of(local.run_tests_fresh(body["id"], body["owner"], *_fresh(body)))
        if op == "delete":
            local.delete(body["id"], body["owner"])
            return None
        if op == "judge":  # a verifier's: its grant, not the token, says whose sessions it may judge
            owner = self._granted(body["grant"])
            timeout_s = body["timeout_s"]  # the samples of one session take turns, each waiting up to its time
            return answer_of(
                local.run_tests(body["id"], owner, body["command"], timeout_s, body.get("files"), timeout_s)
            )
        if op == "judge_fresh":  # the same, in a fresh sandbox on the session's declared artifacts
            owner = self._granted(body["grant"])
            return answer_of(local.run_tests_fresh(body["id"], owner, *_fresh(body), wait_s=body["timeout_s"]))
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
        return granted_owner(self.token, given)

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        self.local.close()


def _fresh(body: Mapping[str, Any]) -> tuple[Any, ...]:
    """A fresh verification's arguments after the session and owner, from a request's body."""
    return (
        body["command"],
        body["timeout_s"],
        body.get("files"),
        list(body["artifacts"]),
        int(body["max_file_bytes"]),
        int(body["max_total_bytes"]),
    )


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
        if op not in ("judge", "judge_fresh", "judge_code") and not hmac.compare_digest(
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
