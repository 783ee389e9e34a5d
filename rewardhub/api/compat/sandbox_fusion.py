"""SandboxFusion's own API at the service root: ``POST /run_code`` and ``GET /v1/ping``.

Trainers that already speak SandboxFusion (verl's ``sandbox_fusion`` code scorer, the
``sandbox-fusion`` client) point their URL here and change nothing else. Request and answer are
SandboxFusion's, field for field; the statuses follow its server's rules (``parse_run_status``):

- a step that the *sandbox* could not carry out is ``Error``, and the answer ``SandboxError``
  with that step's message;
- else a step out of time (``TimeLimitExceeded``) or a non-zero exit makes it ``Failed``;
- else ``Success``. A build that failed has no ``run_result``.

The programs run in our sandbox, with our verdicts mapped onto SandboxFusion's three: a memory
kill is a ``Finished`` run with the signal's negative return code (what SandboxFusion's
subprocesses report), an output past the cap is the same, with a ``message`` saying why.
Python's ``SyntaxError`` is a run that exits 1, as ``python main.py`` does; compiled languages and
TypeScript report the build in ``compile_result``, built once per distinct submission.

Languages: SandboxFusion's names (``nodejs`` is our ``javascript``) and ours (``c``, aliases). A
name SandboxFusion does not know is refused as its server refuses it: 422 with FastAPI's
``detail`` list (our error body rides along). A name it knows but this server does not run
(``php``, ``lean`` ...) is what SandboxFusion answers when a runner cannot run: ``SandboxError``,
with a message that says which languages run here.

File paths in ``files`` and ``fetch_files`` are relative to the program's working directory (/tmp)
or absolute, as SandboxFusion's own tests write and fetch ``/mnt/b``; an absolute path must lie in
one of the job's writable folders (``JOB_FOLDERS``: /tmp, /dev/shm, /mnt), and a fetched file comes
back under the name it was asked for. Neither ``..`` nor a link the program made leads out of them.

Where we are stricter, with a 4xx and a message: file paths must be normalised, without ``..``, and
absolute ones inside the job's folders (SandboxFusion writes anywhere in its overlay), file
contents valid base64, timeouts and memory within the server's caps, and the body within
``max_request_bytes`` (413). ``memory_limit_MB`` of -1 (SandboxFusion's "unlimited") gets
``DEFAULT_MEMORY_MB``. Empty code is run, as SandboxFusion runs it: refusing it would make a
trainer count an empty answer as a sandbox failure instead of a wrong one.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import posixpath
import signal
import socket
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rewardhub.api.body import read_body
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.errors import BadRequest, PayloadTooLarge
from rewardhub.sandbox import (
    COMPILE_LIMITS,
    LANGUAGES,
    Limits,
    RunResult,
    SandboxError,
    SandboxPool,
    UnsupportedLanguage,
)
from rewardhub.sandbox import Language as SandboxLanguage
from rewardhub.sandbox import language as find_language
from rewardhub.sandbox.isolation import JOB_FOLDERS
from rewardhub.sandbox.service import run_with_pool

__all__ = [
    "SANDBOX_FUSION_LANGUAGES",
    "CommandRunResult",
    "RunCodeRequest",
    "RunCodeResponse",
    "command_result",
    "router",
    "run_status",
]

SANDBOX_FUSION_LANGUAGES = (
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql",
    "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit",
    "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift", "racket",
)  # fmt: skip
"""Every ``language`` SandboxFusion's server accepts (its ``Language`` literal); others get its 422."""
OUR_NAMES = {"nodejs": "javascript"}
"""SandboxFusion's names for languages we call otherwise."""

MAX_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 1024
MAX_MEMORY_MB = 8192
MAX_FILES = 64
MAX_OUTPUT_BYTES = 4 << 20
"""stdout and stderr together (SandboxFusion keeps 1 MiB of each)."""


class RunCodeRequest(BaseModel):
    """SandboxFusion's ``RunCodeRequest``: what its client and verl's scorer send."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The program's source.")
    language: str = Field(description="A SandboxFusion language name (or one of ours, such as c).")
    stdin: str | None = Field(None, description="Fed to the program's standard input.")
    compile_timeout: float = Field(10, gt=0, le=MAX_TIMEOUT_S, description="Seconds for the build.")
    run_timeout: float = Field(10, gt=0, le=MAX_TIMEOUT_S, description="Seconds for the run.")
    memory_limit_MB: int = Field(-1, le=MAX_MEMORY_MB, description=f"-1: the default ({DEFAULT_MEMORY_MB} MB).")
    files: dict[str, str | None] = Field(default_factory=dict, description="Path to base64 content (null: skipped).")
    fetch_files: list[str] = Field(default_factory=list, description="Files to send back (base64) after the run.")
    args: list[str] = Field(default_factory=list, description="SandboxFusion's pytest arguments (no pytest mode here).")

    @field_validator("files")
    @classmethod
    def _files(cls, files: dict[str, str | None]) -> dict[str, str | None]:
        if len(files) > MAX_FILES:
            raise ValueError(f"at most {MAX_FILES} files")
        for path, content in files.items():
            _plain_path(path)
            if content is not None:
                try:
                    base64.b64decode(content, validate=True)
                except (binascii.Error, ValueError):
                    raise ValueError(f"the content of {path!r} is not valid base64") from None
        return files

    @field_validator("fetch_files")
    @classmethod
    def _fetch_files(cls, paths: list[str]) -> list[str]:
        for path in paths:
            _plain_path(path, folder_too=True)  # a folder itself brings nothing back, as in SandboxFusion
        return paths


def _plain_path(path: str, folder_too: bool = False) -> None:
    normal = posixpath.normpath(path)
    if not path or normal != path or ".." in path.split("/") or "\0" in path:
        raise ValueError(f"file paths must be normalised, without '..': {path!r}")
    below = any(path.startswith(folder + "/") for folder in JOB_FOLDERS)
    if path.startswith("/") and not (below or (folder_too and path in JOB_FOLDERS)):
        raise ValueError(f"an absolute file path must lie in the job's folders {', '.join(JOB_FOLDERS)}: {path!r}")


WORKDIR = JOB_FOLDERS[0]
"""The program's working directory: a relative path is relative to it."""


def _relative(path: str) -> str:
    """The path as the working directory sees it (``/tmp/a.txt`` is ``a.txt``)."""
    return path[len(WORKDIR) + 1 :] if path.startswith(WORKDIR + "/") else path


class CommandRunResult(BaseModel):
    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    status: Literal["Success", "Failed", "SandboxError"]
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


def command_result(result: RunResult, interpreted: bool = False) -> CommandRunResult:
    """One step in SandboxFusion's terms. ``interpreted``: a compile error is the run's (Python's
    SyntaxError), which exits 1 like ``python main.py`` does."""
    seconds = round(result.elapsed_ms / 1000.0, 6)
    if result.verdict == "sandbox_error":
        return CommandRunResult(status="Error", execution_time=seconds, stderr=result.details.get("message", ""))
    if result.verdict == "timeout":
        return CommandRunResult(
            status="TimeLimitExceeded", execution_time=seconds, stdout=result.stdout, stderr=result.stderr
        )
    code = result.exit_code
    if code is None:  # killed by a signal: subprocesses report minus its number
        code = -_signal_number(result.details.get("signal"))
    if interpreted and result.verdict == "compile_error":
        code = 1
    return CommandRunResult(
        status="Finished", execution_time=seconds, return_code=code, stdout=result.stdout, stderr=result.stderr
    )


def _signal_number(name: str | None) -> int:
    try:
        return int(signal.Signals[name]) if name else int(signal.SIGKILL)
    except KeyError:
        return int(signal.SIGKILL)


def run_status(steps: list[CommandRunResult]) -> tuple[Literal["Success", "Failed", "SandboxError"], str]:
    """SandboxFusion's ``parse_run_status``: Error first, then time, then exit codes."""
    for step in steps:
        if step.status == "Error":
            return "SandboxError", step.stderr or ""
    if any(step.status == "TimeLimitExceeded" for step in steps):
        return "Failed", ""
    if any(step.return_code not in (None, 0) for step in steps):
        return "Failed", ""
    return "Success", ""


public = APIRouter()
protected = APIRouter(dependencies=[Depends(require_key)])


@public.get("/v1/ping")
async def ping() -> str:
    return "pong"


@protected.post("/run_code", response_model=RunCodeResponse)
async def run_code(request: Request, service: ServiceDep) -> Any:
    settings = service.settings
    try:
        raw = await read_body(request, settings.max_request_bytes)
        body = RunCodeRequest.model_validate_json(raw)
    except PayloadTooLarge as exc:
        return _refused(413, exc.error_type, exc.message, exc.message)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        if any(error["type"] in ("json_invalid", "json_type") and not error["loc"] for error in errors):
            return _refused(400, BadRequest.error_type, f"malformed JSON: {errors[0]['msg']}", errors)
        return _refused(422, "invalid_request", "request does not match SandboxFusion's RunCodeRequest", errors)
    try:
        chosen = _language(body.language)
    except UnsupportedLanguage as exc:
        where = [{"loc": ["body", "language"], "msg": exc.message, "type": "literal_error"}]
        return _refused(422, exc.error_type, exc.message, where)
    if isinstance(chosen, str):
        return _answer(RunCodeResponse(status="SandboxError", message=chosen, executor_pod_name=_pod_name()))
    clash = _clash(chosen, body)
    if clash:
        return _refused(422, "invalid_request", clash, [{"loc": ["body", "files"], "msg": clash}])
    backend = settings.sandbox_backend
    outcome = await run_with_pool(backend, functools.partial(_execute, chosen=chosen, body=body))
    return _answer(outcome.response())


def _language(name: str) -> SandboxLanguage | str:
    """Ours for this name; for one SandboxFusion knows (or we know) that this server does not run,
    the message of its SandboxError answer. A name nobody knows raises UnsupportedLanguage (422)."""
    ours = OUR_NAMES.get(name, name)
    try:
        return find_language(ours)
    except UnsupportedLanguage as exc:
        known = {alias for lang in LANGUAGES for alias in (lang.name, *lang.aliases)}
        if name not in SANDBOX_FUSION_LANGUAGES and ours not in known:
            raise
        runs = ", ".join(lang.name for lang in LANGUAGES if lang.available())
        return f"{exc.message}; this server runs {runs}"


def _clash(chosen: SandboxLanguage, body: RunCodeRequest) -> str | None:
    taken = {chosen.source, *(chosen.artifacts if chosen.compile else ())}
    for path in body.files:
        if _relative(path) in taken or _relative(path).split("/")[0] in taken:
            return f"file {path!r} is where the program's own source or build goes"
    return None


@dataclass
class _Outcome:
    compile_result: CommandRunResult | None
    run_result: CommandRunResult | None
    files: dict[str, str]
    message: str = ""
    sandbox_error: str | None = None

    def response(self) -> RunCodeResponse:
        steps = [step for step in (self.compile_result, self.run_result) if step is not None]
        status, message = run_status(steps)
        if self.sandbox_error is not None:
            status, message = "SandboxError", self.sandbox_error
        return RunCodeResponse(
            status=status,
            message=message or self.message,
            compile_result=self.compile_result,
            run_result=self.run_result,
            executor_pod_name=_pod_name(),
            files=self.files,
        )


def _execute(pool: SandboxPool, chosen: SandboxLanguage, body: RunCodeRequest) -> _Outcome:
    """Build, run and fetch, in one job (a worker thread: the pool blocks)."""
    memory_mb = body.memory_limit_MB if body.memory_limit_MB > 0 else DEFAULT_MEMORY_MB
    limits = Limits(timeout_s=body.run_timeout, memory_mb=memory_mb, max_output_bytes=MAX_OUTPUT_BYTES)
    compile_limits = COMPILE_LIMITS.with_(
        timeout_s=body.compile_timeout, memory_mb=max(COMPILE_LIMITS.memory_mb, memory_mb)
    )
    files = {path: base64.b64decode(content) for path, content in body.files.items() if content is not None}
    compile_result = run_result = None
    message = ""
    try:
        with pool.job(chosen, body.code) as job:
            failed_build = job.setup(files, compile_limits)
            if job.build is not None:
                compile_result = command_result(job.build)
            if failed_build is None:
                ran = job.run(body.stdin or "", limits)
                run_result = command_result(ran, interpreted=chosen.compile is None)
                message = _explain(ran, memory_mb)
            fetched = job.fetch(body.fetch_files) if body.fetch_files else {}
    except SandboxError as exc:
        return _Outcome(compile_result, run_result, {}, sandbox_error=exc.message)
    # files only, under the names asked for (SandboxFusion skips a folder: so do we)
    wanted = set(body.fetch_files)
    encoded = {path: base64.b64encode(a.data).decode("ascii") for path, a in fetched.items() if path in wanted}
    return _Outcome(compile_result, run_result, encoded, message)


def _explain(result: RunResult, memory_mb: int) -> str:
    """Why a run that SandboxFusion would call plainly ``Failed`` ended, where our verdict knows more."""
    if result.verdict == "memory":
        return f"the program ran out of memory ({memory_mb} MB)"
    if result.verdict == "output_limit":
        return f"the program wrote more than {MAX_OUTPUT_BYTES} bytes of output and was stopped"
    return ""


def _pod_name() -> str:
    """SandboxFusion reports ``MY_POD_NAME``; outside Kubernetes, the host's name says as much."""
    return os.environ.get("MY_POD_NAME") or socket.gethostname()


def _answer(response: RunCodeResponse) -> JSONResponse:
    return JSONResponse(response.model_dump())


def _refused(status_code: int, error_type: str, message: str, detail: Any) -> JSONResponse:
    """FastAPI's ``detail`` (what SandboxFusion's callers read) beside API.md's error body."""
    detail = _jsonable(detail)
    return JSONResponse(
        {"detail": detail, "error": {"type": error_type, "message": message, "detail": detail}}, status_code=status_code
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, int | float | bool):
        return value
    return str(value)[:500]


router = APIRouter()
router.include_router(public)
router.include_router(protected)
