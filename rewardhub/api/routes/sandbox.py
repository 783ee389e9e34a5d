"""``POST /v1/sandbox/run``: run one program in the sandbox, as API.md describes.

The answer's ``status`` is the sandbox's verdict: ``ok``, ``timeout``, ``memory``,
``runtime_error``, ``compile_error``, ``output_limit``, or ``sandbox_error`` when the sandbox
itself failed (no judgement on the program). It also carries ``sandbox``: the backend and how
memory was limited (``cgroup``, ``container`` or ``rlimit``).

The run goes through :func:`rewardhub.sandbox.service.run_program`, the same way in as the
``python`` grader's: one pool per backend, threads of its own, and a 429 past its bound on
waiting runs.

Caller errors use API.md's error body: malformed JSON 400, a wrong shape or an unknown language
422, a body over the limit 413; a server that cannot isolate code (no bubblewrap and no other
backend chosen) answers 503 and says how to fix it.

Reads two fields of the service's settings: ``sandbox_backend`` and ``max_request_bytes``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from rewardhub.api.body import parse_body, read_body, relative_files
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.errors import InvalidRequest
from rewardhub.sandbox import Limits, RunResult, language
from rewardhub.sandbox.service import run_program

__all__ = ["SandboxRunRequest", "SandboxRunResponse", "router"]

MAX_TIMEOUT_S = 60.0
MAX_MEMORY_MB = 8192
MAX_FILES = 64

router = APIRouter(dependencies=[Depends(require_key)])


class SandboxRunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language: str = Field(
        "python",
        description="python, c, cpp, javascript, typescript, go, java, rust or bash (and their usual aliases).",
    )
    code: str = Field(description="The program's source.")
    stdin: str = Field("", description="Fed to the program's standard input.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Read-only input files, by path relative to the working directory."
    )
    timeout_s: float = Field(10.0, gt=0, le=MAX_TIMEOUT_S, description="Wall-clock limit of the run.")
    memory_mb: int = Field(512, ge=32, le=MAX_MEMORY_MB, description="Memory of the run (all its processes together).")

    @field_validator("files")
    @classmethod
    def _relative_paths(cls, files: dict[str, str]) -> dict[str, str]:
        return relative_files(files, MAX_FILES)


class SandboxRunResponse(BaseModel):
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    elapsed_ms: float
    message: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, result: RunResult) -> SandboxRunResponse:
        details = result.details
        return cls(
            status=result.verdict,
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            elapsed_ms=round(result.elapsed_ms, 3),
            message=details.get("message"),
            sandbox={key: details[key] for key in ("backend", "memory_limit", "signal") if key in details},
        )


@router.post("/v1/sandbox/run", response_model=SandboxRunResponse)
async def sandbox_run(request: Request, service: ServiceDep) -> SandboxRunResponse:
    settings = service.settings
    body = parse_body(await read_body(request, settings.max_request_bytes), SandboxRunRequest)
    chosen = language(body.language)
    if chosen.source in body.files:
        raise InvalidRequest(f"file {chosen.source!r} is where the program's own source goes")
    limits = Limits(timeout_s=body.timeout_s, memory_mb=body.memory_mb)
    result = await run_program(chosen.name, body.code, body.stdin, body.files, limits, backend=settings.sandbox_backend)
    return SandboxRunResponse.of(result)
