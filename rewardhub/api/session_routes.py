"""``/v1/sessions``: stateful sandboxes for tool-using agents, as API.md describes.

- ``POST /v1/sessions``: a runtime (``python`` or ``bash``), files, limits and a TTL; the session's id.
- ``POST /v1/sessions/{id}/run``: one call, ``code`` (the runtime's language) or ``command`` (shell,
  in either runtime). The answer has the words of ``/v1/sandbox/run``: ``status``, ``exit_code``,
  ``stdout``, ``stderr``, ``elapsed_ms``, and ``state`` (``kept``, or ``lost`` when the call ended
  the interpreter: its variables are gone, its files are not).
- ``POST /v1/sessions/{id}/test``: judge the session's final state: a test command run on its files
  in a fresh program (the interpreter's state ends; the files stay), and ``reward`` 1.0 when it passes.
- ``GET /v1/sessions/{id}``, ``DELETE /v1/sessions/{id}``, ``GET /v1/sessions`` (the key's own).

A session belongs to the API key that made it (another key gets 404). Ended sessions answer 410
``session_expired`` (idle TTL, lifetime) or 404 ``session_lost`` / ``session_not_found``, with the
reason; creating past the limits is 429 with ``Retry-After``. Sessions live in this process: with
``--api-workers`` above 1 a session is reachable only through the process that made it.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.sandbox_routes import relative_files
from rewardhub.api.service import require_key
from rewardhub.sandbox.session_sandbox import SessionLimits
from rewardhub.sandbox.sessions import SessionManager, SessionSettings, key_owner
from rewardhub.sandbox.settings import SandboxSettings
from rewardhub.sandbox.verdicts import RunResult

__all__ = ["SessionCreateRequest", "SessionRunRequest", "manager_of", "router"]

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

    @field_validator("files")
    @classmethod
    def _relative_paths(cls, files: dict[str, str]) -> dict[str, str]:
        return relative_files(files, MAX_FILES)


class SessionRunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str | None = Field(None, description="In the session's runtime: Python (state kept) or a bash command.")
    command: str | None = Field(None, description="A shell command, in either runtime.")
    timeout_s: float = Field(10.0, gt=0, description="Wall-clock limit of this call.")

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


def manager_of(request: Request) -> SessionManager:
    """The app's session manager, made on first use (an app that never opens a session starts none)."""
    state = request.app.state
    with _manager_lock:
        manager = getattr(state, "sessions", None)
        if manager is None:
            settings = getattr(state, "settings", None)
            backend = getattr(settings, "sandbox_backend", None)
            sandbox = SandboxSettings(backend=backend) if backend else SandboxSettings()
            manager = state.sessions = SessionManager(
                getattr(state, "session_settings", None) or SessionSettings(), sandbox
            )
        return manager


def _owner(request: Request) -> str:
    _, _, token = request.headers.get("authorization", "").partition(" ")
    return key_owner(token.strip())


async def _off_loop(work: Any, *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(_threads, work, *args)


async def _body(request: Request, model: type[Any]) -> Any:
    settings = getattr(request.app.state, "settings", None)
    return parse_body(await read_body(request, getattr(settings, "max_request_bytes", MAX_BODY)), model)


@router.post("/v1/sessions", status_code=201)
async def create_session(request: Request) -> dict[str, Any]:
    body: SessionCreateRequest = await _body(request, SessionCreateRequest)
    manager = manager_of(request)
    lim = body.limits
    limits = SessionLimits(
        memory_mb=lim.memory_mb,
        max_processes=lim.max_processes,
        max_file_mb=lim.max_file_mb,
        max_output_bytes=lim.max_output_kb << 10,
        lifetime_s=lim.lifetime_s if lim.lifetime_s is not None else manager.settings.max_lifetime_s,
    )
    session = await _off_loop(manager.create, _owner(request), body.runtime, body.files, limits, body.ttl_s)
    return session.describe()


@router.get("/v1/sessions")
async def list_sessions(request: Request) -> dict[str, Any]:
    manager = manager_of(request)
    return {"sessions": [s.describe() for s in manager.list(_owner(request))]}


@router.get("/v1/sessions/{session_id}")
async def get_session(session_id: str, request: Request) -> dict[str, Any]:
    return manager_of(request).get(session_id, _owner(request)).describe()


@router.delete("/v1/sessions/{session_id}")
async def delete_session(session_id: str, request: Request) -> dict[str, Any]:
    await _off_loop(manager_of(request).delete, session_id, _owner(request))
    return {"id": session_id, "deleted": True}


@router.post("/v1/sessions/{session_id}/run", response_model=SessionRunResponse)
async def run_in_session(session_id: str, request: Request) -> SessionRunResponse:
    body: SessionRunRequest = await _body(request, SessionRunRequest)
    manager = manager_of(request)
    session = manager.get(session_id, _owner(request))
    if body.command is not None:
        call = {"command": body.command}
    else:
        call = {"code": body.code} if session.runtime == "python" else {"command": body.code}
    result = await _off_loop(manager.run, session_id, _owner(request), call, body.timeout_s)
    return SessionRunResponse.of(result)


@router.post("/v1/sessions/{session_id}/test")
async def test_session(session_id: str, request: Request) -> dict[str, Any]:
    body: SessionTestRequest = await _body(request, SessionTestRequest)
    manager = manager_of(request)
    result = await _off_loop(manager.run_tests, session_id, _owner(request), body.command, body.timeout_s, body.files)
    answer = SessionRunResponse.of(result).model_dump()
    answer["state"] = "lost"  # the interpreter stopped so that its code could not answer for the tests
    answer["reward"] = None if result.verdict == "sandbox_error" else float(result.verdict == "ok")
    return answer
