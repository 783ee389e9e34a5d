"""ORS (the Open Reward Standard): a code environment whose tools run in rewardhub sessions.

ORS clients (ROLL, SkyRL, slime and the ``ors-sdk`` client) speak to an environment server:
``/create_session``, ``/create``, ``/{env}/call`` answering ``{blocks, reward, finished}``,
``/delete``. This module is that environment, served by the ORS SDK's own ``ors.Server``: each ORS
session is one rewardhub session (over HTTP), its task's ``files`` written at setup; the tools are
``python`` (state kept across calls), ``bash``, and ``submit``, which runs the task's
``test_command`` and answers ``reward`` 1.0 or 0.0 with ``finished``: in a fresh sandbox on the
task's ``artifacts`` (its working directory's regular files when it names none), or on the
session's own files for a task with ``"verify": "in_session"``, as ``rewardhub serve``'s own ORS
surface judges (docs/sessions.md). A sandbox failure is an error of the call, never a reward of 0.

    from ors import Server
    from rewardhub.integrations.ors import code_environment

    Env = code_environment(tasks={"train": [{"prompt": "...", "files": {...}, "test_command": "..."}]})
    Server([Env]).run(port=8080)        # REWARDHUB_URL says where rewardhub serves

Importing this module needs no ors-sdk; :func:`code_environment` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rewardhub.integrations.common import service_spec
from rewardhub.integrations.sessions import Session, observation

if TYPE_CHECKING:
    from ors.types import ToolOutput

__all__ = ["BashInput", "PythonInput", "code_environment"]


class PythonInput(BaseModel):
    code: str = Field(description="Python source; variables and files persist between calls.")


class BashInput(BaseModel):
    command: str = Field(description="A bash command line; files persist between calls.")


class _CodeEnvironment:
    """The environment's behaviour; :func:`code_environment` puts it on ``ors.Environment``."""

    tasks: Mapping[str, Sequence[Mapping[str, Any]]] = {}
    url: str | None = None
    api_key: str | None = None
    timeout_s: float = 10.0
    task_spec: Mapping[str, Any]

    def __init__(self, task_spec: Mapping[str, Any] | None = None, secrets: Mapping[str, str] | None = None) -> None:
        super().__init__(task_spec or {}, dict(secrets or {}))  # type: ignore[call-arg]
        self._session: Session | None = None

    async def setup(self) -> None:
        files = dict(self.task_spec.get("files") or {})
        service = service_spec(self.url, self.api_key)
        self._session = await asyncio.to_thread(Session, "python", files, None, None, service)

    async def teardown(self) -> None:
        if self._session is not None:
            await asyncio.to_thread(self._session.close)
            self._session = None

    def get_prompt(self) -> Any:
        from ors.types import TextBlock

        return [TextBlock(text=str(self.task_spec.get("prompt", "")))]

    @classmethod
    def list_splits(cls) -> list[str]:
        return list(cls.tasks)

    @classmethod
    def list_tasks(cls, split: str) -> list[Mapping[str, Any]]:
        return list(cls.tasks.get(split, []))

    async def python(self, params: PythonInput) -> ToolOutput:
        """Run Python code in this session's interpreter; the value of a final expression is printed."""
        return await self._run(code=params.code)

    async def bash(self, params: BashInput) -> ToolOutput:
        """Run a bash command in this session's sandbox."""
        return await self._run(command=params.command)

    async def submit(self) -> ToolOutput:
        """Finish: the task's tests run on the session's files, and their verdict is the reward."""
        from ors.types import TextBlock, ToolOutput

        command = self.task_spec.get("test_command")
        if not command:
            raise ValueError("this task has no test_command to judge it by")
        test_files = dict(self.task_spec.get("test_files") or {})
        artifacts = None
        if self.task_spec.get("verify", "fresh") != "in_session":
            artifacts = list(self.task_spec.get("artifacts") or ["."])
        answer = await asyncio.to_thread(self._open().test, command, test_files, 60.0, artifacts)
        if answer.get("reward") is None:
            raise RuntimeError(f"the tests could not run: {answer.get('message') or answer['status']}")
        metadata = {"status": answer["status"], "exit_code": answer["exit_code"]}
        metadata["verification"] = answer.get("verification", "in_session")
        return ToolOutput(
            blocks=[TextBlock(text=observation(answer))], metadata=metadata, reward=answer["reward"], finished=True
        )

    async def _run(self, **body: Any) -> ToolOutput:
        from ors.types import TextBlock, ToolOutput

        session = self._open()
        code, command = body.get("code"), body.get("command")
        answer = await asyncio.to_thread(session.run, code, command=command, timeout_s=self.timeout_s)
        metadata = {"status": answer["status"], "exit_code": answer["exit_code"], "elapsed_ms": answer["elapsed_ms"]}
        return ToolOutput(blocks=[TextBlock(text=observation(answer))], metadata=metadata)

    def _open(self) -> Session:
        if self._session is None:
            raise RuntimeError("the environment was not set up")
        return self._session


for _tool in (_CodeEnvironment.python, _CodeEnvironment.bash, _CodeEnvironment.submit):
    _tool._env_tool = True  # type: ignore[attr-defined]  # what ors.tool marks, without importing ors here
    _tool._env_tool_shared = True  # type: ignore[attr-defined]


def code_environment(
    tasks: Mapping[str, Sequence[Mapping[str, Any]]],
    name: str = "rewardhub_code",
    url: str | None = None,
    api_key: str | None = None,
    timeout_s: float = 10.0,
) -> type:
    """An ``ors.Environment`` class named ``name`` over these tasks by split (each ``{"prompt",
    "files"?, "test_command"?, "test_files"?, "artifacts"?, "verify"?}``), its tools run by the
    rewardhub at ``url``."""
    from ors import Environment
    from ors.types import ToolOutput as _ToolOutput

    globals()["ToolOutput"] = _ToolOutput  # the tools' return annotation, which ORS reads to find them
    attributes = {"tasks": dict(tasks), "url": url, "api_key": api_key, "timeout_s": timeout_s, "__module__": __name__}
    return type(name, (_CodeEnvironment, Environment), attributes)
