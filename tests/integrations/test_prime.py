"""rewardhub verifiers as rewards of PrimeIntellect ``verifiers`` tasks (the released verifiers 0.4.0).

A real task class scores a real trace with its own ``Task.score``, which finds our reward the
way it finds an ``@vf.reward`` method (or a config-plugged one), and calls the running service.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block

from rewardhub.integrations import prime

REPO = Path(__file__).resolve().parents[2]


def import_verifiers() -> Any:
    """The installed ``verifiers.v1`` (PrimeIntellect's package, of the dev extra).

    This repository's ``verifiers/`` folder (rewardhub's rule verifiers, imported as
    ``rewardhub.verifiers``) has the same top-level name. The suite runs without the repository
    root on ``sys.path`` (``.ci/run`` uses ``python -P -m pytest``; the ``pytest`` command does the
    same), so nothing here works around the folder: where it does shadow, this says how to run.
    """
    spec = importlib.util.find_spec("verifiers")
    shadowed = spec is not None and Path(spec.origin or "").resolve().is_relative_to(REPO / "verifiers")
    assert not shadowed, (
        "the repository root is on sys.path (python -m pytest puts it there): run pytest or python -P -m pytest"
    )
    return pytest.importorskip("verifiers.v1", reason="verifiers 0.4.0 is not installed (dev extra)")


vf = import_verifiers()


class MathData(vf.TaskData):
    answer: str


def trace_of(task: vf.Task, *messages: Any) -> vf.Trace:
    nodes = [vf.MessageNode(parent=i - 1 if i else None, message=m) for i, m in enumerate(messages)]
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig(), name="solver"),
        nodes=nodes,
    )


def math_task(service_url: str, **options: Any) -> type[vf.Task]:
    class MathTask(vf.Task[MathData]):
        correct = prime.reward_func(verifier="math", url=service_url, **options)

    return MathTask


async def test_a_task_reward_is_the_verifiers_score(service_url: str) -> None:
    task = math_task(service_url, weight=2.0)(MathData(prompt="2+3?", answer="5"))
    right = trace_of(task, vf.UserMessage(content="2+3?"), vf.AssistantMessage(content="It is \\boxed{5}."))
    wrong = trace_of(task, vf.UserMessage(content="2+3?"), vf.AssistantMessage(content="\\boxed{6}"))
    await task.score(right)
    await task.score(wrong)
    assert right.rewards["rewardhub_math"].score == 1.0 and right.rewards["rewardhub_math"].weight == 2.0
    assert wrong.rewards["rewardhub_math"].score == 0.0
    assert right.reward == 2.0


async def test_the_guides_snippet_defines_a_task_that_scores(service_url: str, monkeypatch) -> None:
    snippet = doc_block("prime")
    namespace: dict[str, Any] = {}
    exec(compile(snippet.replace("http://127.0.0.1:8000", service_url), "docs/compat.md", "exec"), namespace)
    task = namespace["MathTask"](namespace["MathData"](prompt="2+3?", answer="5"))
    trace = trace_of(task, vf.UserMessage(content="2+3?"), vf.AssistantMessage(content="\\boxed{5}"))
    await task.score(trace)
    assert trace.reward == 1.0


async def test_a_tool_calling_trajectory_goes_as_a_conversation(service_url: str) -> None:
    call = vf.ToolCall(id="c1", name="lookup", arguments='{"q": "2+3"}')
    task = math_task(service_url, reference=lambda data: data.answer, name="final")(MathData(prompt="2+3?", answer="5"))
    task.correct.verifier = "exact"  # reads the last assistant turn, after the call and its result
    trace = trace_of(
        task,
        vf.SystemMessage(content="Use tools."),
        vf.UserMessage(content="2+3?"),
        vf.AssistantMessage(content=None, tool_calls=[call]),
        vf.ToolMessage(tool_call_id="c1", content="5"),
        vf.AssistantMessage(content="5"),
    )
    assert prime.trace_messages(trace.messages)[2]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "2+3"}'}}
    ]
    await task.score(trace)
    assert trace.rewards["final"].score == 1.0
    assert task.correct.last_result.status == "ok"


async def test_a_plugged_reward_from_the_task_config(service_url: str, tmp_path, monkeypatch) -> None:
    module = tmp_path / "hub_rewards.py"
    module.write_text(
        "from rewardhub.integrations import prime\n"
        f"correct = prime.reward_func(verifier='exact', url={service_url!r}, reference='answer')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = vf.TaskConfig(rewards={"exact_answer": vf.RewardFunctionConfig(fn="hub_rewards:correct", weight=0.5)})
    task = vf.Task[MathData](MathData(prompt="Say yes", answer="yes"), config)
    trace = trace_of(task, vf.UserMessage(content="Say yes"), vf.AssistantMessage(content="yes"))
    await task.score(trace)
    assert trace.rewards["exact_answer"].score == 1.0 and trace.rewards["exact_answer"].weight == 0.5
    sys.modules.pop("hub_rewards", None)


async def test_an_unjudged_sample_is_an_error_on_the_trace_not_a_zero(service_url: str) -> None:
    task = math_task(service_url)(MathData(prompt="?", answer="\\frac{"))
    trace = trace_of(task, vf.UserMessage(content="?"), vf.AssistantMessage(content="\\boxed{1}"))
    with pytest.raises(vf.TaskError, match="could not judge"):
        await task.score(trace)
    assert trace.rewards["rewardhub_math"] is None


async def test_a_conversation_the_service_refuses_is_an_error_not_a_zero(service_url: str) -> None:
    task = math_task(service_url)(MathData(prompt="?", answer="1"))
    orphan = trace_of(task, vf.UserMessage(content="?"), vf.ToolMessage(tool_call_id="x", content="1"))
    with pytest.raises(vf.TaskError, match="422"):
        await task.score(orphan)
