"""``/v1/sessions``: stateful sandboxes for tool-using agents, as API.md describes.

- ``POST /v1/sessions``: a runtime (``python`` or ``bash``), files, a TTL, the contract's
  ``timeout_s`` (a call's default limit) and ``memory_mb`` (the session's), or the same limits
  under ``limits``; 201 with ``session_id`` (and ``id``, kept) and ``expires_at``.
- ``POST /v1/sessions/{id}/run``: one call, ``code`` (the runtime's language) or ``command`` (shell,
  in either runtime), with ``stdin``. The answer is ``/v1/sandbox/run``'s: ``status``, ``exit_code``,
  ``stdout``, ``stderr``, ``elapsed_ms``, ``message``, ``sandbox``, and ``state`` (``kept``, or
  ``lost`` when the call ended the interpreter: its variables are gone, its files are not).
- ``POST /v1/sessions/{id}/test``: judge the session's final state: a test command run on its files
  in a fresh program (the interpreter's state ends; the files stay), and ``reward`` 1.0 when it passes.
- ``GET /v1/sessions/{id}``, ``DELETE /v1/sessions/{id}``, ``GET /v1/sessions`` (the key's own).

A session belongs to the API key that made it (another key gets 404). ``DELETE`` answers 204.
Ended sessions answer 410 ``session_expired`` (idle TTL, lifetime) or ``session_lost`` (its sandbox
died, an earlier run of the service made it), or 404 ``session_not_found`` (deleted, never known),
with the reason; creating past the limits is 429 with ``Retry-After``. The routes ask the service's one
session host (:mod:`rewardhub.sandbox.session_host`): in this process, or, with ``--api-workers``
above 1, in the ``rewardhub serve`` process above the workers, so a session made through one worker
is used through any. With ``execution: celery`` they ask the session worker that holds the session
(:mod:`rewardhub.execution.celery_sessions`), whose loss makes it 410 ``session_lost``.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rewardhub.api.auth import authenticated_owner
from rewardhub.api.body import parse_body, read_body
from rewardhub.api.sandbox_routes import relative_files
from rewardhub.api.service import require_key
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.sessions import LocalSessions, SessionClient, SessionManager, SessionSettings

__all__ = ["SessionCreateRequest", "SessionRunRequest", "caller_grant", "caller_owner", "router", "sessions_of"]

MAX_FILES = 256
MAX_BODY = 64 << 20

router = APIRouter(dependencies=[Depends(require_key)])
_threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="session")
_manager_lock = threading.Lock()


class SessionLimitsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_mb: int = Field(512, ge=32, description="Memory of everything the session holds at once.")
    max_processes: int = Field(64, ge=4, le=4096, description="Processes and threads at once.")
    max_file_mb: int = Field(64, ge=1, le=4096, description="Largest file a program may write.")
    max_output_kb: int = Field(1024, ge=1, le=16384, description="stdout and stderr of one call together.")
    lifetime_s: float | None = Field(None, gt=0, description="Hard lifetime (default: the host's largest).")


class SessionCreateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runtime: Literal["python", "bash"] = Field("python", description="What a call's ``code`` is.")
    files: dict[str, str] = Field(default_factory=dict, description="Files by path relative to the working directory.")
    limits: SessionLimitsBody = Field(default_factory=SessionLimitsBody)
    ttl_s: float | None = Field(None, gt=0, description="Idle time after which the session expires.")
    timeout_s: float = Field(10.0, gt=0, description="A call's wall-clock limit when the call gives none.")
    memory_mb: int | None = Field(
        None, ge=32, description="Memory of everything the session holds at once (or limits.memory_mb)."
    )

    @model_validator(mode="after")
    def _one_memory(self) -> SessionCreateRequest:
        given = self.limits.model_fields_set
        if self.memory_mb is not None and "memory_mb" in given and self.limits.memory_mb != self.memory_mb:
            raise ValueError("memory_mb and limits.memory_mb differ: give one")
        return self

    def session_memory_mb(self) -> int:
        return self.memory_mb if self.memory_mb is not None else self.limits.memory_mb

    @field_validator("files")
    @classmethod
    def _relative_paths(cls, files: dict[str, str]) -> dict[str, str]:
        return relative_files(files, MAX_FILES)


class SessionRunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str | None = Field(None, description="In the session's runtime: Python (state kept) or a bash command.")
    command: str | None = Field(None, description="A shell command, in either runtime.")
    stdin: str = Field("", description="Fed to the call's standard input.")
    timeout_s: float | None = Field(None, gt=0, description="Wall-clock limit of this call (the session's default).")

    @model_validator(mode="after")
    def _one_of(self) -> SessionRunRequest:
        if (self.code is None) == (self.command is None):
            raise ValueError("give exactly one of 'code' and 'command'")
        return self


class SessionTestRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="The test command, run on the session's files (exit 0 passes).")
    files: dict[str, str] = Field(default_factory=dict, description="Test files written beside the session's first.")
    timeout_s: float = Field(60.0, gt=0)


class SessionRunResponse(BaseModel):
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    elapsed_ms: float
    state: str | None = None
    message: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, result: RunResult) -> SessionRunResponse:
        details = result.details
        return cls(
            status=result.verdict,
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            elapsed_ms=round(result.elapsed_ms, 3),
            state=details.get("state"),
            message=details.get("message"),
            sandbox={key: details[key] for key in ("backend", "memory_limit", "signal") if key in details},
        )


def sessions_of(request: Request) -> LocalSessions | SessionClient:
    """The app's sessions: the host ``create_app`` set up, a manager a test put there, or else a
    manager of this process made on first use (an app that never opens a session starts none)."""
    state = request.app.state
    with _manager_lock:
        sessions = getattr(state, "sessions", None)
        if isinstance(sessions, SessionManager):
            sessions = state.sessions = LocalSessions(sessions)
        if sessions is None:
            settings = getattr(state, "settings", None)
            backend = getattr(settings, "sandbox_backend", None)
            sandbox = SandboxSettings(backend=backend) if backend else SandboxSettings()
            sessions = state.sessions = LocalSessions(
                SessionManager(getattr(state, "session_settings", None) or SessionSettings(), sandbox)
            )
        return sessions


def caller_owner(request: Request) -> str:
    """Who owns what this request makes: a digest of the API key its route authenticated (Bearer,
    or ORS's ``X-API-Key``), never of another header it carries (:mod:`rewardhub.api.auth`)."""
    return authenticated_owner(request)


def caller_grant(request: Request) -> dict[str, Any] | None:
    """What a sample this request has judged in a session carries: the caller, the session host and
    a ticket (:func:`rewardhub.sandbox.session_host.grant`); None in an app without a session host."""
    granter = getattr(request.app.state, "session_grant", None)
    return granter(caller_owner(request)) if granter is not None else None


async def _off_loop(work: Any, *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(_threads, work, *args)


async def _body(request: Request, model: type[Any]) -> Any:
    settings = getattr(request.app.state, "settings", None)
    return parse_body(await read_body(request, getattr(settings, "max_request_bytes", MAX_BODY)), model)


@router.post("/v1/sessions", status_code=201)
async def create_session(request: Request) -> dict[str, Any]:
    body: SessionCreateRequest = await _body(request, SessionCreateRequest)
    lim = body.limits
    limits = {
        "memory_mb": body.session_memory_mb(),
        "max_processes": lim.max_processes,
        "max_file_mb": lim.max_file_mb,
        "max_output_bytes": lim.max_output_kb << 10,
        "lifetime_s": lim.lifetime_s,  # None: the host's largest
        "call_timeout_s": body.timeout_s,
    }
    sessions = sessions_of(request)
    return await _off_loop(sessions.create, caller_owner(request), body.runtime, body.files, limits, body.ttl_s)


@router.get("/v1/sessions")
async def list_sessions(request: Request) -> dict[str, Any]:
    return {"sessions": await _off_loop(sessions_of(request).list, caller_owner(request))}


@router.get("/v1/sessions/{session_id}")
async def get_session(session_id: str, request: Request) -> dict[str, Any]:
    return await _off_loop(sessions_of(request).get, session_id, caller_owner(request))


@router.delete("/v1/sessions/{session_id}", status_code=204)
async def delete_session(session_id: str, request: Request) -> Response:
    await _off_loop(sessions_of(request).delete, session_id, caller_owner(request))
    return Response(status_code=204)


@router.post("/v1/sessions/{session_id}/run", response_model=SessionRunResponse)
async def run_in_session(session_id: str, request: Request) -> SessionRunResponse:
    body: SessionRunRequest = await _body(request, SessionRunRequest)
    sessions = sessions_of(request)
    call: dict[str, Any] = {"command": body.command} if body.command is not None else {"code": body.code}
    if body.stdin:
        call["stdin"] = body.stdin
    result = await _off_loop(sessions.run, session_id, caller_owner(request), call, body.timeout_s)
    return SessionRunResponse.of(result)


@router.post("/v1/sessions/{session_id}/test")
async def test_session(session_id: str, request: Request) -> dict[str, Any]:
    body: SessionTestRequest = await _body(request, SessionTestRequest)
    sessions = sessions_of(request)
    result = await _off_loop(
        sessions.run_tests, session_id, caller_owner(request), body.command, body.timeout_s, body.files
    )
    answer = SessionRunResponse.of(result).model_dump()
    answer["state"] = "lost"  # the interpreter stopped so that its code could not answer for the tests
    answer["reward"] = None if result.verdict == "sandbox_error" else float(result.verdict == "ok")
    return answer
