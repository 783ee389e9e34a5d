"""ORS (the Open Reward Standard): a code environment served by ``rewardhub serve`` itself, on its sessions.

The routes and bodies are those ors-sdk 0.1.0's client speaks (its ``ors.client``; its own
``ors.Server`` answers them the same way), at the root of the service, for one environment named
by ``REWARDHUB_ORS_ENVIRONMENT`` (``code``):

- ``POST /create_session``: a fresh ORS session id, as server-sent events (``task_id``, ``end``);
  ``POST /delete_session`` answers ``{"sid"}``.
- ``POST /create`` (header ``X-Session-ID``, body ``{"task_spec"}`` or ``{"split", "index"}``):
  one rewardhub session for that ORS session, with the task's ``files``. ``POST /delete`` ends it.
  ``POST /ping`` is 404 once it ended.
- ``POST /{env}/call`` (``{"name", "input"}``), as server-sent events ending in ``{"ok": true,
  "output": {"blocks", "metadata", "reward", "finished"}}``; tools: ``python`` (``{"code"}``, state
  kept across calls), ``bash`` (``{"command"}``) and ``submit`` (the task's ``test_command`` with its
  ``test_files``, in a fresh sandbox on the task's ``artifacts``: ``reward`` 1.0 or 0.0 and
  ``finished``; see :func:`_submit`). A tool's input
  that does not fit, or an unknown tool, is ``{"ok": false, "error"}``; a session that is gone or a
  failed sandbox is an ``error`` event (the client raises), never a reward of 0.
- ``GET /list_environments``, ``GET /{env}/tools`` and ``/task_tools``, ``GET /{env}/prompt``,
  ``GET /{env}/splits``, ``POST /{env}/tasks``, ``/num_tasks``, ``/task``, ``/task_range``: the
  tasks of ``REWARDHUB_ORS_TASKS_FILE`` (JSON ``{split: [task, ...]}``; a task is ``{"prompt",
  "files", "test_command", "test_files"?, "artifacts"?, "verify"?}``); without it, no splits, and
  clients pass ``task_spec``.

The ORS session is found again through the service's session host (its id is a tag of the rewardhub
session), so with ``--api-workers N`` any worker answers any call. The API key is ORS's
``X-API-Key`` (or ``Authorization: Bearer``); a session belongs to the key that was checked, never to
another header of the request.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import caller_owner, sessions_of
from rewardhub.api.offload import off_loop
from rewardhub.errors import BadRequest, InvalidRequest, NotFound, RewardhubError, Unauthorized
from rewardhub.messages import observation
from rewardhub.sessions.fresh import artifact_paths
from rewardhub.settings import OrsSettings

__all__ = ["OrsSettings", "router"]

SID_TAG = "ors_sid"
TASK_TAG = "ors_task"
PING_S = 10.0
"""A comment line this often while a call runs: the client stops reading after 30 s of silence."""
CHUNK = 4096
WHOLE_WORKING_DIRECTORY = (".",)
"""The artifacts of a task that names none: every regular file of the working directory, less dot
files, links, special files and Python's and pytest's startup files (:mod:`rewardhub.sandbox.inside.collect`).
What a daemon, the environment, an interpreter hook or the home folder did stays behind; a file the
tests read from the working directory still travels, so a task closes that by naming its artifacts."""


def _settings(request: Request) -> OrsSettings:
    """The ``ors`` section of the app's settings (a test's app without settings: the environment's)."""
    settings = getattr(request.app.state, "settings", None)
    return getattr(settings, "ors", None) or OrsSettings()


@cache
def _tasks(path: Path | None) -> dict[str, list[dict[str, Any]]]:
    if path is None:
        return {}
    loaded = json.loads(path.read_text())
    if not isinstance(loaded, dict) or not all(isinstance(v, list) for v in loaded.values()):
        raise InvalidRequest(f"{path}: ORS tasks must be a JSON object of lists of tasks, by split")
    return loaded


class PythonInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="Python source; variables and files persist between calls.")


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(description="A bash command line; files persist between calls.")


TOOLS = [
    {
        "name": "bash",
        "description": "Run a bash command in this session's sandbox.",
        "input_schema": BashInput.model_json_schema(),
    },
    {
        "name": "python",
        "description": "Run Python code in this session's interpreter; the value of a final expression is printed.",
        "input_schema": PythonInput.model_json_schema(),
    },
    {
        "name": "submit",
        "description": "Finish: the task's tests run on the session's files, and their verdict is the reward.",
        "input_schema": None,
    },
]


class CreateBody(BaseModel):
    """ORS's ``CreateSession``."""

    model_config = ConfigDict(extra="forbid")
    env_name: str | None = None
    task_spec: dict[str, Any] | None = None
    split: str | None = None
    index: int | None = None
    secrets: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CreateBody:
        if (self.task_spec is not None) == (self.split is not None and self.index is not None):
            raise ValueError("give either task_spec or both split and index")
        return self


class CallBody(BaseModel):
    """ORS's ``ToolCall``."""

    model_config = ConfigDict(extra="forbid")
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    task_id: str | None = None


class SplitBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    split: str
    index: int | None = None
    start: int | None = None
    stop: int | None = None


async def _authorized(request: Request) -> None:
    """The service's keys, as ORS clients send them (``X-API-Key``) or as rewardhub's do (Bearer);
    the key checked is the one that owns the sessions (``Authenticator.admit``)."""
    auth = request.app.state.service.auth
    scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
    token = request.headers.get("x-api-key") or (bearer if scheme.lower() == "bearer" else "")
    if auth.enabled and not token.strip():
        raise Unauthorized("missing API key: ORS clients send it as X-API-Key")
    auth.admit(request, token)


router = APIRouter(dependencies=[Depends(_authorized)])


def _sid(request: Request) -> str:
    sid = request.headers.get("x-session-id", "").strip()
    if not sid:
        raise BadRequest("X-Session-ID header is required")
    return sid


def _environment(request: Request, name: str) -> None:
    served = _settings(request).environment
    if name.lower() != served.lower():
        raise NotFound(f"unknown environment {name!r}: this service serves {served!r}")


async def _bound(request: Request, sid: str) -> dict[str, Any]:
    """The rewardhub session of an ORS session (404 when there is none: never made, or ended)."""
    found = await off_loop(sessions_of(request).find, caller_owner(request), SID_TAG, sid)
    if found is None:
        raise NotFound(f"no live environment for ORS session {sid!r} (never created, deleted or ended)")
    return found


def _events(*events: tuple[str, str]) -> StreamingResponse:
    async def stream() -> AsyncIterator[bytes]:
        for event, data in events:
            yield _event(event, data)

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _event(event: str, data: str) -> bytes:
    lines = "".join(f"data: {line}\r\n" for line in (data.split("\n") if data else [""]))
    return f"event: {event}\r\n{lines}\r\n".encode()


# --- stateless: environments, tools, tasks ------------------------------------------------------------


@router.post("/create_session")
async def create_session() -> StreamingResponse:
    return _events(("task_id", secrets.token_hex(16)), ("end", ""))


@router.post("/delete_session")
async def delete_session(request: Request) -> dict[str, str]:
    return {"sid": _sid(request)}


@router.get("/list_environments")
async def list_environments(request: Request) -> list[str]:
    return [_settings(request).environment.lower()]


async def _split_body(request: Request, name: str) -> SplitBody:
    _environment(request, name)
    body: SplitBody = parse_body(await read_body(request, 1 << 20), SplitBody)
    if body.split not in _tasks(_settings(request).tasks_file):
        raise BadRequest(f"invalid split {body.split!r}")
    return body


def _split_tasks(request: Request, split: str) -> list[dict[str, Any]]:
    return _tasks(_settings(request).tasks_file)[split]


# --- one ORS session: a rewardhub session ---------------------------------------------------------


@router.post("/create")
async def create(request: Request) -> dict[str, str]:
    sid = _sid(request)
    body: CreateBody = parse_body(await read_body(request, 64 << 20), CreateBody)
    if body.env_name is not None:
        _environment(request, body.env_name)
    if body.task_spec is not None:
        task = body.task_spec
    else:
        tasks = _tasks(_settings(request).tasks_file).get(body.split or "")
        if tasks is None:
            raise BadRequest(f"invalid split {body.split!r}")
        if not 0 <= (body.index or 0) < len(tasks):
            raise BadRequest(f"invalid index {body.index} for split {body.split!r} of {len(tasks)} tasks")
        task = tasks[body.index or 0]
    files = task.get("files") or {}
    if not isinstance(files, Mapping) or not all(isinstance(v, str) for v in files.values()):
        raise InvalidRequest("a task's files must be an object of path: text")
    _verification(task)  # a task that cannot be judged is refused now, not at the model's submit
    sessions, owner = sessions_of(request), caller_owner(request)
    if await off_loop(sessions.find, owner, SID_TAG, sid) is not None:
        raise BadRequest(f"ORS session {sid!r} already exists")
    tags = {SID_TAG: sid, TASK_TAG: {key: value for key, value in task.items() if key != "files"}}
    await off_loop(sessions.create, owner, "python", dict(files), None, None, tags)
    return {"sid": sid}


@router.post("/delete")
async def delete(request: Request) -> dict[str, str]:
    sid = _sid(request)
    sessions, owner = sessions_of(request), caller_owner(request)
    found = await off_loop(sessions.find, owner, SID_TAG, sid)
    if found is not None:
        try:
            await off_loop(sessions.delete, found["id"], owner)
        except RewardhubError:  # ended meanwhile: deleted is what was asked
            pass
    return {"sid": sid}


@router.post("/ping")
async def ping(request: Request) -> dict[str, str]:
    await _bound(request, _sid(request))
    return {"status": "ok"}


# --- one environment's routes (registered after the fixed paths above) --------------------------


@router.get("/{env_name}/tools")
async def tools(env_name: str, request: Request) -> dict[str, Any]:
    _environment(request, env_name)
    return {"tools": TOOLS}


@router.get("/{env_name}/splits")
async def splits(env_name: str, request: Request) -> list[dict[str, str]]:
    _environment(request, env_name)
    kinds = {"train": "train", "validation": "validation", "test": "test"}
    return [{"name": name, "type": kinds.get(name, "validation")} for name in _tasks(_settings(request).tasks_file)]


@router.post("/{env_name}/tasks")
async def tasks(env_name: str, request: Request) -> dict[str, Any]:
    body = await _split_body(request, env_name)
    return {"tasks": _split_tasks(request, body.split), "env_name": env_name}


@router.post("/{env_name}/num_tasks")
async def num_tasks(env_name: str, request: Request) -> dict[str, int]:
    body = await _split_body(request, env_name)
    return {"num_tasks": len(_split_tasks(request, body.split))}


@router.post("/{env_name}/task")
async def task(env_name: str, request: Request) -> dict[str, Any]:
    body = await _split_body(request, env_name)
    listed = _split_tasks(request, body.split)
    if body.index is None or not -len(listed) <= body.index < len(listed):
        raise BadRequest("invalid index")
    return {"task": listed[body.index]}


@router.post("/{env_name}/task_range")
async def task_range(env_name: str, request: Request) -> dict[str, Any]:
    body = await _split_body(request, env_name)
    return {"tasks": _split_tasks(request, body.split)[slice(body.start, body.stop)]}


@router.get("/{env_name}/task_tools")
async def task_tools(env_name: str, request: Request) -> dict[str, Any]:
    _environment(request, env_name)
    await _bound(request, _sid(request))
    return {"tools": TOOLS}


@router.get("/{env_name}/prompt")
async def prompt(env_name: str, request: Request) -> list[dict[str, str]]:
    _environment(request, env_name)
    found = await _bound(request, _sid(request))
    return [{"type": "text", "text": str(found["tags"][TASK_TAG].get("prompt", ""))}]


@router.post("/{env_name}/call")
async def call(env_name: str, request: Request) -> StreamingResponse:
    _environment(request, env_name)
    found = await _bound(request, _sid(request))
    body: CallBody = parse_body(await read_body(request, 64 << 20), CallBody)
    if body.task_id is not None:  # a resumed call: this server keeps no call after its answer
        return _events(("error", "unknown task_id"))
    work = asyncio.ensure_future(_tool(request, found, body))

    async def stream() -> AsyncIterator[bytes]:
        yield _event("task_id", secrets.token_hex(16))
        while True:
            done, _ = await asyncio.wait({work}, timeout=PING_S)
            if done:
                break
            yield b": ping\r\n\r\n"
        try:
            answer = json.dumps(work.result())
        except RewardhubError as exc:  # the session is gone or the sandbox failed: not the model's doing
            yield _event("error", f"{exc.error_type}: {exc.message}")
            return
        for start in range(0, len(answer), CHUNK):
            yield _event("end" if start + CHUNK >= len(answer) else "chunk", answer[start : start + CHUNK])

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


async def _tool(request: Request, found: Mapping[str, Any], body: CallBody) -> dict[str, Any]:
    """ORS's ``RunToolOutput`` for one call."""
    sessions, owner, settings = sessions_of(request), caller_owner(request), _settings(request)
    try:
        if body.name == "python":
            code = PythonInput(**body.input).code
            answer = await off_loop(sessions.run, found["id"], owner, {"code": code}, settings.call_timeout_s)
        elif body.name == "bash":
            command = BashInput(**body.input).command
            answer = await off_loop(sessions.run, found["id"], owner, {"command": command}, settings.call_timeout_s)
        elif body.name == "submit":
            return await _submit(request, found)
        else:
            return {"ok": False, "error": f"{body.name!r} is not a valid tool"}
    except ValidationError as exc:
        return {"ok": False, "error": f"Tool input validation error: {exc.errors(include_url=False)}"}
    shown = {"status": answer.verdict, "exit_code": answer.exit_code, "stdout": answer.stdout, "stderr": answer.stderr}
    shown["state"] = answer.details.get("state")
    metadata = {"status": answer.verdict, "exit_code": answer.exit_code, "elapsed_ms": round(answer.elapsed_ms, 3)}
    return _output(observation(shown), metadata)


def _verification(task: Mapping[str, Any]) -> list[str] | None:
    """The artifacts a task's episode is judged from, in a fresh sandbox; None for the task that asks
    for ``"verify": "in_session"``. Fresh is the default: a task that names no ``artifacts`` is judged
    from its working directory's regular files (:data:`WHOLE_WORKING_DIRECTORY`)."""
    verify = task.get("verify", "fresh")
    if verify not in ("fresh", "in_session"):
        raise InvalidRequest(f"a task's verify must be 'fresh' or 'in_session', not {verify!r}")
    artifacts = task.get("artifacts")
    if verify == "in_session":
        if artifacts:
            raise InvalidRequest("a task's artifacts are carried only by a fresh verification")
        return None
    if artifacts is None:
        return list(WHOLE_WORKING_DIRECTORY)
    if not isinstance(artifacts, list) or not artifacts or not all(isinstance(path, str) for path in artifacts):
        raise InvalidRequest("a task's artifacts must be a non-empty list of relative paths or globs")
    try:
        return artifact_paths(artifacts)
    except ValueError as exc:
        raise InvalidRequest(f"a task's artifacts: {exc}") from None


async def _submit(request: Request, found: Mapping[str, Any]) -> dict[str, Any]:
    """The task's tests, judged where the model never was: the session's processes stop, its
    artifacts are copied out, and ``test_command`` runs with ``test_files`` in a fresh sandbox
    (:mod:`rewardhub.sessions.fresh`). A missing or refused artifact is a reward of 0; a sandbox
    that failed is an ``error`` event, never a reward."""
    task = found["tags"][TASK_TAG]
    command = task.get("test_command")
    if not command:
        return {"ok": False, "error": "this task has no test_command to judge it by"}
    files = dict(task.get("test_files") or {})
    sessions, owner, timeout_s = sessions_of(request), caller_owner(request), _settings(request).test_timeout_s
    artifacts = _verification(task)
    if artifacts is None:
        result = await off_loop(sessions.run_tests, found["id"], owner, command, timeout_s, files)
    else:
        result = await off_loop(sessions.run_tests_fresh, found["id"], owner, command, timeout_s, files, artifacts)
    if result.verdict == "sandbox_error":
        raise RewardhubError(f"the tests could not run: {result.details.get('message') or 'the sandbox failed'}")
    shown = {"status": result.verdict, "exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}
    metadata = {"status": result.verdict, "exit_code": result.exit_code}
    metadata["verification"] = "in_session" if artifacts is None else "fresh"
    if "artifacts" in result.details:
        metadata["artifacts"] = result.details["artifacts"]
    return _output(observation(shown), metadata, reward=float(result.ok), finished=True)


def _output(text: str, metadata: dict[str, Any], reward: float | None = None, finished: bool = False) -> dict[str, Any]:
    blocks = [{"text": text, "detail": None, "type": "text"}]
    return {"ok": True, "output": {"blocks": blocks, "metadata": metadata, "reward": reward, "finished": finished}}
