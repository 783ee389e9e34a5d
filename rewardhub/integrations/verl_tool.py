"""verl: a ``BaseTool`` whose calls run in a rewardhub session, so interpreter state and files persist
across a trajectory's tool calls (verl's SandboxFusion tool re-runs a stateless ``/run_code`` each time).

In verl's agent-loop tool config (``actor_rollout_ref.rollout.multi_turn.tool_config_path``)::

    tools:
      - class_name: rewardhub.integrations.verl_tool.RewardhubSessionTool
        config:
          type: native
          runtime: python          # or bash
          timeout_s: 10
          ttl_s: 120               # a trajectory's session ends this long after its last call
          max_sessions: 256        # trajectory sessions kept open (least recently used closed first)
          test_command: null       # e.g. "python -m pytest -q": calc_reward runs it on the files
        tool_schema: {...}         # optional; default: code_interpreter(code: str)

verl 0.9.1's ``ToolAgentLoop`` calls ``create``, ``execute`` and ``release`` around *every* tool call
and passes the trajectory as ``agent_data``. So a session belongs to the trajectory
(``agent_data.request_id``), not to the short-lived instance: a trajectory's calls share one, and it
ends by its idle TTL (the service's, or ``ttl_s``). Where the caller keeps one instance for a whole
trajectory (``create`` once, many ``execute``, ``calc_reward``, ``release``) without ``agent_data``,
the session is the instance's and ``release`` deletes it.

``create_kwargs`` may carry ``files`` (the task's files) and ``test_command`` / ``test_files``.
The step reward of ``execute`` is 0.0; ``calc_reward`` is the test's reward (1.0 or 0.0). A call's
verdict is in the metrics (``status``) and, when not ``ok``, in the text the model reads.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any
from uuid import uuid4

from rewardhub.integrations.common import service_spec
from rewardhub.integrations.sessions import Session, observation

__all__ = ["DEFAULT_SCHEMA"]  # and RewardhubSessionTool, built on first use (see __getattr__)

DEFAULT_SCHEMA = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": "Run code in a sandbox that keeps its variables and files between calls.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The code to run."}},
            "required": ["code"],
        },
    },
}


def __getattr__(name: str) -> Any:
    """``RewardhubSessionTool`` is built on first use, on verl's ``BaseTool``: importing this module
    needs no verl (a caller module must import without its trainer), getting the class does."""
    if name != "RewardhubSessionTool":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from verl.tools.base_tool import BaseTool

    tool = type("RewardhubSessionTool", (_SessionTool, BaseTool), {"__module__": __name__, "__doc__": __doc__})
    globals()["RewardhubSessionTool"] = tool
    return tool


class _SessionTool:
    """The tool's methods; :func:`__getattr__` puts them on verl's ``BaseTool``."""

    config: dict[str, Any]

    def __init__(self, config: dict, tool_schema: Any = None) -> None:
        from verl.tools.schemas import OpenAIFunctionToolSchema

        schema = tool_schema or OpenAIFunctionToolSchema.model_validate(config.get("tool_schema") or DEFAULT_SCHEMA)
        super().__init__(config, schema)  # type: ignore[call-arg]
        self.runtime = config.get("runtime", "python")
        self.timeout_s = float(config.get("timeout_s", 10.0))
        self.ttl_s = config.get("ttl_s")
        self.service = service_spec(config.get("url"), config.get("api_key"))
        self._instances: dict[str, dict[str, Any]] = {}
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        """By trajectory (``agent_data.request_id``) or by instance: see the module's docstring."""
        self.max_sessions = int(config.get("max_sessions", 256))
        """Trajectory sessions kept open by this tool; past it the least recently used is deleted."""

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        from verl.tools.schemas import ToolResponse

        instance_id = instance_id or str(uuid4())
        self._instances[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[Any, float, dict]:
        from verl.tools.schemas import ToolResponse

        code = parameters.get("code")
        if not isinstance(code, str):
            return ToolResponse(text="the tool needs a string argument 'code'"), 0.0, {"status": "invalid_call"}
        session = await self._session(instance_id, kwargs.get("agent_data"))
        answer = await asyncio.to_thread(session.run, code, timeout_s=self.timeout_s)
        metrics = {"status": answer["status"], "elapsed_ms": answer["elapsed_ms"]}
        return ToolResponse(text=observation(answer)), 0.0, metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        options = self._instances.get(instance_id, {})
        command = options.get("test_command") or self.config.get("test_command")
        session = self._sessions.get(self._key(instance_id, kwargs.get("agent_data")))
        if not command or session is None:
            return 0.0
        answer = await asyncio.to_thread(session.test, command, options.get("test_files") or {})
        reward = answer.get("reward")
        if reward is None:  # the sandbox failed: no judgement of the model, and verl wants a float
            raise RuntimeError(f"the session's tests could not run: {answer.get('message') or answer['status']}")
        return float(reward)

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._instances.pop(instance_id, None)
        session = self._sessions.pop(instance_id, None)  # an instance's own session; a trajectory's lives on
        if session is not None:
            await asyncio.to_thread(session.close)

    def _key(self, instance_id: str, agent_data: Any) -> str:
        request_id = getattr(agent_data, "request_id", None)
        return f"trajectory:{request_id}" if request_id else instance_id

    async def _session(self, instance_id: str, agent_data: Any) -> Session:
        key = self._key(instance_id, agent_data)
        session = self._sessions.get(key)
        if session is None:
            options = self._instances.get(instance_id, {})
            files = options.get("files") or {}
            session = await asyncio.to_thread(Session, self.runtime, files, self.ttl_s, None, self.service)
            self._sessions[key] = session
            while len(self._sessions) > self.max_sessions:
                _, oldest = self._sessions.popitem(last=False)
                await asyncio.to_thread(oldest.close)
        self._sessions.move_to_end(key)
        return session
