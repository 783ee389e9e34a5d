"""A rewardhub verifier as a reward of a PrimeIntellect ``verifiers`` task (verifiers 0.4, ``verifiers.v1``).

In ``verifiers`` a task's rewards are async functions tagged ``@vf.reward``; the task calls each
with what its signature names (``task``: the row's data, ``trace``: the rollout) and records the
float under the function's name, with its weight. :func:`reward_func` builds one that scores the
trace's conversation on the service::

    import verifiers.v1 as vf
    from rewardhub.integrations import prime

    class MathData(vf.TaskData):
        answer: str

    class MathTask(vf.Task[MathData]):
        correct = prime.reward_func(verifier="math", url="http://rewardhub:8000")

or, without touching the task's code, plugged by its config:
``rewards: {correct: {fn: "my_rewards:correct"}}`` where ``correct = prime.reward_func(...)``.

The conversation goes whole (system, user, assistant turns with their tool calls, tool results),
so text verifiers read the last assistant turn and trajectory verifiers see every turn. The
reference is a field of the task's data (``reference="answer"`` by default) or a function of it.
A sample the service could not judge (timeout, error) raises :class:`RewardUnavailable`: the task
records the error on the trace (``verifiers`` attributes it to the task's scoring), rather than a
reward of 0 that would read as a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rewardhub.integrations.common import service_spec, shared_async_client
from rewardhub.types import OK, Result, VerifierSpec, verifier_label

__all__ = ["RewardUnavailable", "RewardhubReward", "reward_func", "trace_messages"]


class RewardUnavailable(RuntimeError):
    """The service answered, but could not judge the sample (its status and message are in the text)."""


class RewardhubReward:
    """An async ``(task, trace) -> float`` tagged the way ``@vf.reward`` tags a method.

    A callable object, not a function, so that as a class attribute of a task it is not bound
    as a method (``verifiers`` passes ``task`` and ``trace`` by name, never ``self``).
    """

    reward = True  # the tag verifiers' task discovery looks for

    def __init__(
        self,
        verifier: VerifierSpec | Mapping[str, Any],
        url: str | None,
        api_key: str | None,
        reference: str | Callable[[Any], Any] | None,
        name: str,
        weight: float,
        priority: int,
    ) -> None:
        self.verifier = verifier
        self.service = service_spec(url, api_key)
        self.reference = reference
        self.__name__ = self.__qualname__ = name
        self._vf_weight = weight
        self.reward_priority = priority
        self.last_result: Result | None = None

    async def __call__(self, task: Any, trace: Any) -> float:
        sample = {"messages": trace_messages(trace.messages), "reference": self._reference(task)}
        task_id = getattr(task, "id", None) or getattr(task, "idx", None)
        if task_id is not None:
            sample["id"] = str(task_id)
        [result] = await shared_async_client(self.service).score([sample], self.verifier)
        self.last_result = result
        if result.status != OK:
            raise RewardUnavailable(f"rewardhub could not judge this rollout ({result.status}): {result.error}")
        return result.score

    def _reference(self, task: Any) -> Any:
        if self.reference is None:
            return None
        if callable(self.reference):
            return self.reference(task)
        return getattr(task, self.reference, None)


def reward_func(
    verifier: VerifierSpec | Mapping[str, Any],
    url: str | None = None,
    *,
    api_key: str | None = None,
    reference: str | Callable[[Any], Any] | None = "answer",
    name: str | None = None,
    weight: float = 1.0,
    priority: int = 0,
) -> RewardhubReward:
    """A ``verifiers`` task reward that scores the rollout with ``verifier`` on the service at ``url``.

    ``url`` and ``api_key`` default to ``REWARDHUB_URL`` and ``REWARDHUB_API_KEY``; ``name`` (the
    key the reward is recorded under) defaults to ``rewardhub_<verifier>``.
    """
    label = verifier_label(verifier)
    return RewardhubReward(verifier, url, api_key, reference, name or f"rewardhub_{label}", weight, priority)


def trace_messages(messages: Any) -> list[dict[str, Any]]:
    """``verifiers`` messages as OpenAI chat messages (its tool calls are flat; OpenAI's nest a ``function``)."""
    out = []
    for message in messages:
        raw = message.model_dump(exclude_none=True) if hasattr(message, "model_dump") else dict(message)
        turn: dict[str, Any] = {"role": raw["role"], "content": _text(raw.get("content"))}
        for key in ("name", "tool_call_id", "reasoning_content"):
            if raw.get(key) is not None:
                turn[key] = raw[key]
        if raw.get("tool_calls"):
            turn["tool_calls"] = [_openai_call(call) for call in raw["tool_calls"]]
        out.append(turn)
    return out


def _openai_call(call: Mapping[str, Any]) -> dict[str, Any]:
    if "function" in call:
        return dict(call)
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call["name"], "arguments": call["arguments"]},
    }


def _text(content: Any) -> Any:
    """Text stays text; a list of parts goes as it is (the service reads text parts, refuses the rest)."""
    return "" if content is None else content
