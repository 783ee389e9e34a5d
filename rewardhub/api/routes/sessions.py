"""``/v1/sessions``: stateful sandboxes for tool-using agents, as API.md describes.

- ``POST /v1/sessions``: a runtime (``python`` or ``bash``), files, a TTL, the contract's
  ``timeout_s`` (a call's default limit) and ``memory_mb`` (the session's), or the same limits
  under ``limits``; 201 with ``session_id`` (and ``id``, kept) and ``expires_at``.
- ``POST /v1/sessions/{id}/run``: one call, ``code`` (the runtime's language) or ``command`` (shell,
  in either runtime), with ``stdin``. The answer is ``/v1/sandbox/run``'s: ``status``, ``exit_code``,
  ``stdout``, ``stderr``, ``elapsed_ms``, ``message``, ``sandbox``, and ``state`` (``kept``, or
  ``lost`` when the call ended the interpreter: its variables are gone, its files are not).
- ``POST /v1/sessions/{id}/test``: judge the session's final state: a test command run on its files
  in a fresh program (the interpreter's state ends; the files stay), and ``reward`` 1.0 when it passes;
  with ``artifacts`` (``verify: "fresh"``), in a new sandbox on those artifacts alone
  (:mod:`rewardhub.sessions.fresh`).
- ``GET /v1/sessions/{id}``, ``DELETE /v1/sessions/{id}``, ``GET /v1/sessions`` (the key's own).

A session belongs to the API key that made it (another key gets 404). ``DELETE`` answers 204.
Ended sessions answer 410 ``session_expired`` (idle TTL, lifetime) or ``session_lost`` (its sandbox
died, an earlier run of the service made it), or 404 ``session_not_found`` (deleted, never known),
with the reason; creating past the limits is 429 with ``Retry-After``. The routes ask the service's
:class:`~rewardhub.sessions.protocol.Sessions` (``SessionsDep``), whichever holds them: this process,
or, with ``--api-workers`` above 1, the ``rewardhub serve`` process above the workers
(:mod:`rewardhub.sessions.host`), so a session made through one worker is used through any. With
``execution: celery`` they ask the session worker that holds the session
(:mod:`rewardhub.execution.celery_sessions`), whose loss makes it 410 ``session_lost``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rewardhub.api.body import parse_body, read_body, relative_files
from rewardhub.api.deps import ServiceDep, SessionsDep, caller_owner, require_key
from rewardhub.api.offload import off_loop
from rewardhub.sandbox.verdicts import RunResult
from rewardhub.sessions.fresh import artifact_paths

__all__ = ["SessionCreateRequest", "SessionRunRequest", "SessionTestRequest", "router"]

MAX_FILES = 256

router = APIRouter(dependencies=[Depends(require_key)])


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
    verify: Literal["in_session", "fresh"] | None = Field(
        None, description="'fresh': in a new sandbox on the declared artifacts only (the default when some are)."
    )
    artifacts: list[str] = Field(
        default_factory=list, description="What a fresh verification copies out: relative paths, folders, globs."
    )

    @field_validator("artifacts")
    @classmethod
    def _artifacts(cls, artifacts: list[str]) -> list[str]:
        return artifact_paths(artifacts)

    @model_validator(mode="after")
    def _fresh_has_artifacts(self) -> SessionTestRequest:
        if self.verify == "fresh" and not self.artifacts:
            raise ValueError("a fresh verification needs artifacts: the paths the tests read from the session")
        if self.verify == "in_session" and self.artifacts:
            raise ValueError("artifacts are carried only by a fresh verification (verify: 'fresh')")
        return self


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


@router.post("/v1/sessions", status_code=201)
async def create_session(request: Request, service: ServiceDep, sessions: SessionsDep) -> dict[str, Any]:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SessionCreateRequest)
    lim = body.limits
    limits = {
        "memory_mb": body.session_memory_mb(),
        "max_processes": lim.max_processes,
        "max_file_mb": lim.max_file_mb,
        "max_output_bytes": lim.max_output_kb << 10,
        "lifetime_s": lim.lifetime_s,  # None: the host's largest
        "call_timeout_s": body.timeout_s,
    }
    return await off_loop(sessions.create, caller_owner(request), body.runtime, body.files, limits, body.ttl_s)


@router.get("/v1/sessions")
async def list_sessions(request: Request, sessions: SessionsDep) -> dict[str, Any]:
    return {"sessions": await off_loop(sessions.list, caller_owner(request))}


@router.get("/v1/sessions/{session_id}")
async def get_session(session_id: str, request: Request, sessions: SessionsDep) -> dict[str, Any]:
    return await off_loop(sessions.get, session_id, caller_owner(request))


@router.delete("/v1/sessions/{session_id}", status_code=204)
async def delete_session(session_id: str, request: Request, sessions: SessionsDep) -> Response:
    await off_loop(sessions.delete, session_id, caller_owner(request))
    return Response(status_code=204)


@router.post("/v1/sessions/{session_id}/run", response_model=SessionRunResponse)
async def run_in_session(
    session_id: str, request: Request, service: ServiceDep, sessions: SessionsDep
) -> SessionRunResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SessionRunRequest)
    call: dict[str, Any] = {"command": body.command} if body.command is not None else {"code": body.code}
    if body.stdin:
        call["stdin"] = body.stdin
    result = await off_loop(sessions.run, session_id, caller_owner(request), call, body.timeout_s)
    return SessionRunResponse.of(result)


@router.post("/v1/sessions/{session_id}/test")
async def test_session(session_id: str, request: Request, service: ServiceDep, sessions: SessionsDep) -> dict[str, Any]:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SessionTestRequest)
    owner = caller_owner(request)
    if body.artifacts:  # verify "fresh", said or implied
        result = await off_loop(
            sessions.run_tests_fresh, session_id, owner, body.command, body.timeout_s, body.files, body.artifacts
        )
    else:
        result = await off_loop(sessions.run_tests, session_id, owner, body.command, body.timeout_s, body.files)
    answer = SessionRunResponse.of(result).model_dump()
    answer["verification"] = "fresh" if body.artifacts else "in_session"
    if "artifacts" in result.details:
        answer["artifacts"] = result.details["artifacts"]
    answer["state"] = "lost"  # the interpreter stopped so that its code could not answer for the tests
    answer["reward"] = None if result.verdict == "sandbox_error" else float(result.verdict == "ok")
    return answer
