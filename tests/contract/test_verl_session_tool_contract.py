"""verl 0.9.1, its own code: the guide's agent-loop tool config is loaded by verl's
``initialize_tools_from_config`` into our ``BaseTool``, which is then driven the way 0.9.1's
``ToolAgentLoop._call_tool`` drives every tool call (``create(create_kwargs=...)``, ``execute(
instance_id, args, agent_data=...)``, ``release``; transcribed, and checked against that file's
source, because importing the agent loop pulls in its rollout servers) against the session routes
served on a real port (this process's uvicorn; a whole ``rewardhub serve`` start would cost the
CI more than the test): a trajectory's calls share one session, another trajectory has its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from contract_support import doc_block
from session_server import session_routes_served
from test_verl_contract import UPSTREAM

__all__ = ["UPSTREAM"]

pytestmark = pytest.mark.usefixtures("on_path")


@pytest.fixture(scope="module")
def sessions_url() -> Iterator[str]:
    with session_routes_served() as url:
        yield url


def _agent_loop_source() -> str:
    return (Path(UPSTREAM()) / "verl" / "experimental" / "agent_loop" / "tool_agent_loop.py").read_text()


async def _call_tool(tool, name: str, arguments: dict, tools_kwargs: dict, agent_data) -> tuple:
    """ToolAgentLoop._call_tool's BaseTool branch in verl 0.9.1."""
    tool_args = json.loads(json.dumps(arguments))
    kwargs = tools_kwargs.get(name, {})
    instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))
    try:
        return await tool.execute(instance_id, tool_args, agent_data=agent_data)
    finally:
        await tool.release(instance_id)


def test_the_agent_loop_calls_tools_as_transcribed():
    source = _agent_loop_source()
    assert 'instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))' in source
    assert "instance_id, tool_args, agent_data=agent_data" in source
    assert "await tool.release(instance_id)" in source


def test_the_guides_tool_config_runs_a_trajectory_in_one_session(sessions_url, tmp_path, monkeypatch):
    from verl.tools.base_tool import BaseTool
    from verl.tools.tool_registry import initialize_tools_from_config

    monkeypatch.setenv("REWARDHUB_URL", sessions_url)
    config = tmp_path / "tool_config.yaml"
    config.write_text(doc_block("verl-session-tool"))
    [tool] = initialize_tools_from_config(str(config))
    assert isinstance(tool, BaseTool) and tool.name == "code_interpreter"

    tools_kwargs = {"code_interpreter": {"create_kwargs": {"files": {"data.txt": "20"}}}}
    first, second = SimpleNamespace(request_id="trajectory-1"), SimpleNamespace(request_id="trajectory-2")

    async def episode() -> list:
        return [
            await _call_tool(
                tool, "code_interpreter", {"code": "x = int(open('data.txt').read())"}, tools_kwargs, first
            ),
            await _call_tool(tool, "code_interpreter", {"code": "x * 2 + 2"}, tools_kwargs, first),
            await _call_tool(tool, "code_interpreter", {"code": "x"}, tools_kwargs, second),
            await _call_tool(tool, "code_interpreter", {"code": "import time; time.sleep(5)"}, tools_kwargs, first),
        ]

    defined, used, elsewhere, slow = asyncio.run(episode())
    assert (used[0].text, used[1], used[2]["status"]) == ("42\n", 0.0, "ok")
    assert defined[2]["status"] == "ok"
    assert elsewhere[2]["status"] == "runtime_error" and "NameError" in elsewhere[0].text
    assert slow[2]["status"] == "timeout" and "[timeout]" in slow[0].text
