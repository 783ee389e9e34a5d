"""ORS (the Open Reward Standard), ors-sdk 0.1.0 from the registry, its own client (``/create_session``
over SSE, ``/create``, ``/{env}/call`` over SSE, ``/delete``) running an episode whose tools run in
rewardhub sessions (state kept across calls, ``submit`` answering the tests' reward with
``finished``) against two servers: our code environment on the SDK's own ``ors.Server``, and
``rewardhub serve`` itself (``rewardhub.api.compat.ors``), where bad input is the SDK's error, an
ended session is an error of the call (never a reward), and the service keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator

import pytest
from contract_support import doc_block, installed
from serve_support import needs_bubblewrap
from session_server import in_thread, session_routes_served

from rewardhub.launcher import ServiceProcess

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


@pytest.fixture(scope="module")
def rewardhub_ors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``rewardhub serve`` with the task above as the ``train`` split of its ORS environment."""
    needs_bubblewrap()
    tasks = tmp_path_factory.mktemp("ors") / "tasks.json"
    tasks.write_text(json.dumps({"train": [TASK]}))
    saved = {key: os.environ.get(key) for key in ("REWARDHUB_ORS_TASKS_FILE", "REWARDHUB_API_KEYS")}
    os.environ.update({"REWARDHUB_ORS_TASKS_FILE": str(tasks), "REWARDHUB_API_KEYS": "ors-key"})
    try:
        with ServiceProcess(workers=1) as url:
            yield url
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)


def _episode(url: str, api_key: str | None = None) -> tuple:
    from ors.client import AsyncORS

    async def episode() -> tuple:
        client = AsyncORS(base_url=url, api_key=api_key)
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

    return asyncio.run(episode())


@pytest.mark.parametrize("server", ["ors_url", "rewardhub_ors"])
def test_an_ors_client_runs_an_episode_and_gets_the_tests_reward(server, request):
    url = request.getfixturevalue(server)
    tools, prompt, first, second, written, crash, graded = _episode(url, "ors-key")
    assert tools == {"python", "bash", "submit"}
    assert prompt[0].text == TASK["prompt"]
    assert (first.metadata["status"], first.finished, first.reward) == ("ok", False, None)
    assert second.blocks[0].text == "5\n"
    assert written.blocks[0].text == "done\n"
    assert crash.metadata["status"] == "runtime_error" and "ZeroDivisionError" in crash.blocks[0].text
    assert (graded.reward, graded.finished, graded.metadata["status"]) == (1.0, True, "ok")
    assert graded.metadata["verification"] == "fresh"  # both servers judge an episode where the model never was


def test_rewardhub_serves_the_task_list_and_refuses_a_wrong_key(rewardhub_ors):
    from ors.client import AsyncORS
    from ors.client._types import AuthenticationError

    async def listing() -> tuple:
        client = AsyncORS(base_url=rewardhub_ors, api_key="ors-key")  # held: its connections close with it
        environment = client.environment("code")
        return (
            await environment.list_splits(),
            await environment.num_tasks("train"),
            await environment.get_task("train", 0),
        )

    splits, count, task = asyncio.run(listing())
    assert (splits, count, task.task_spec["test_command"]) == (["train"], 1, TASK["test_command"])

    async def wrong_key() -> list[str]:
        client = AsyncORS(base_url=rewardhub_ors, api_key="wrong")
        return await client.environment("code").list_splits()

    with pytest.raises(AuthenticationError):
        asyncio.run(wrong_key())


def test_bad_input_and_an_ended_session_are_errors_and_the_service_keeps_serving(rewardhub_ors):
    import httpx
    from ors.client import AsyncORS
    from ors.client._types import ToolCallError

    async def misuse() -> tuple:
        client = AsyncORS(base_url=rewardhub_ors, api_key="ors-key")
        environment = client.environment("code")
        async with environment.session(split="train", index=0) as session:
            with pytest.raises(ToolCallError, match="not a valid tool"):
                await session.call_tool("rm_rf", {})
            with pytest.raises(ToolCallError, match="validation error"):
                await session.call_tool("python", {"source": "1"})
            ours = httpx.get(f"{rewardhub_ors}/v1/sessions", headers={"Authorization": "Bearer ors-key"}).json()[
                "sessions"
            ]
            [bound] = [s for s in ours if s["tags"]["ors_sid"] == session.sid]
            httpx.delete(f"{rewardhub_ors}/v1/sessions/{bound['id']}", headers={"Authorization": "Bearer ors-key"})
            with pytest.raises(RuntimeError, match="no live environment"):
                await session.call_tool("python", {"code": "1"})

    asyncio.run(misuse())
    create = httpx.post(f"{rewardhub_ors}/create", json={"split": "nope", "index": 0}, headers=_sid("x"))
    assert create.status_code == 400 and "invalid split" in create.text
    _, _, _, second, _, _, graded = _episode(rewardhub_ors, "ors-key")
    assert (second.blocks[0].text, graded.reward) == ("5\n", 1.0)


def _sid(sid: str) -> dict[str, str]:
    return {"X-Session-ID": sid, "X-API-Key": "ors-key"}


def test_the_guides_episode_runs_against_rewardhub_serve(rewardhub_ors, capsys):
    code = doc_block("ors-client").replace("http://127.0.0.1:8000", rewardhub_ors).replace("YOUR_KEY", "ors-key")
    exec(compile(code, "docs/sessions.md (ORS)", "exec"), {})
    assert capsys.readouterr().out == "1.0 True\n"
