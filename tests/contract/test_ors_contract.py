"""ORS (the Open Reward Standard), ors-sdk 0.1.0 from the registry: our code environment served by the
SDK's own ``ors.Server``, driven by the SDK's own client (``/create_session`` over SSE, ``/create``,
``/{env}/call`` over SSE, ``/delete``), its tools running in rewardhub sessions: state kept across
calls, and ``submit`` answering the tests' reward with ``finished``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from contract_support import installed
from session_server import in_thread, session_routes_served

VERSION = "0.1.0"


def UPSTREAM():
    return installed(f"ors-sdk-{VERSION}", [f"ors-sdk=={VERSION}", "structlog==26.1.0"])


pytestmark = pytest.mark.usefixtures("on_path")

TASK = {
    "prompt": "Write add(a, b) in solution.py.",
    "files": {"numbers.txt": "2 3"},
    "test_command": "python3 -c 'from solution import add; assert add(2, 3) == 5'",
}


@pytest.fixture(scope="module")
def ors_url() -> Iterator[str]:
    from ors import Server

    from rewardhub.integrations.ors import code_environment

    with session_routes_served() as rewardhub_url:
        environment = code_environment({"train": [TASK]}, name="code", url=rewardhub_url)
        with in_thread(Server([environment]).app) as url:
            yield url


def test_an_ors_client_runs_an_episode_and_gets_the_tests_reward(ors_url):
    from ors.client import AsyncORS

    async def episode() -> tuple:
        client = AsyncORS(base_url=ors_url)
        environment = client.environment("code")
        tools = {tool.name for tool in await environment.list_tools()}
        async with environment.session(split="train", index=0) as session:
            prompt = await session.get_prompt()
            first = await session.call_tool("python", {"code": "a, b = map(int, open('numbers.txt').read().split())"})
            second = await session.call_tool("python", {"code": "a + b"})
            written = await session.call_tool(
                "bash", {"command": "printf 'def add(a, b):\\n    return a + b\\n' > solution.py && echo done"}
            )
            crash = await session.call_tool("python", {"code": "1 / 0"})
            graded = await session.call_tool("submit", {})
        return tools, prompt, first, second, written, crash, graded

    tools, prompt, first, second, written, crash, graded = asyncio.run(episode())
    assert tools == {"python", "bash", "submit"}
    assert prompt[0].text == TASK["prompt"]
    assert (first.metadata["status"], first.finished, first.reward) == ("ok", False, None)
    assert second.blocks[0].text == "5\n"
    assert written.blocks[0].text == "done\n"
    assert crash.metadata["status"] == "runtime_error" and "ZeroDivisionError" in crash.blocks[0].text
    assert (graded.reward, graded.finished, graded.metadata["status"]) == (1.0, True, "ok")
