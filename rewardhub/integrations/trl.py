"""TRL: reward functions for ``GRPOTrainer`` (and TRL's other online trainers) scored by the service.

``reward_func(verifier="math")`` returns a callable with TRL's reward signature
``(prompts, completions, completion_ids, **kwargs) -> list[float | None]``; ``async_reward_func``
is its async twin, which TRL runs concurrently with other async reward functions.

- **Completions** may be plain strings or conversations (lists of ``{"role", "content"}``
  messages, content possibly a list of text blocks); the assistant's text is what is scored.
- **References** come from the dataset columns TRL passes as keyword arguments: the first of
  ``reference``, ``solution``, ``answer``, ``ground_truth``, ``label`` that is present, or the
  column named by ``reference_key``.
- **Groups**: completions of one prompt share a ``group``, so group verifiers (majority vote,
  pass@k) see the whole group.
- **None** where the verifier could not judge (timeout, error): TRL turns it into NaN and leaves
  the completion out of its group baseline, instead of training on a made-up 0. A service that
  cannot be reached, or that refuses the request (unknown verifier, bad config), raises.
- **Logs**: through TRL's ``log_metric``, the batch's status rates and the mean score of each
  component of a composite (``<name>/status/ok``, ``<name>/component/format``, see
  :mod:`rewardhub.integrations.logs`); through ``log_extra``, each completion's status in the
  completions table.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rewardhub.integrations.logs import batch_logs
from rewardhub.types import OK, ChatMessage, Result, Sample, VerifierSpec

__all__ = [
    "REFERENCE_COLUMNS",
    "AsyncRewardFunction",
    "RewardFunction",
    "async_reward_func",
    "build_samples",
    "completion_text",
    "reward_func",
    "trl_rewards",
]

REFERENCE_COLUMNS = ("reference", "solution", "answer", "ground_truth", "label")
"""Dataset columns read as the reference, in this order, unless ``reference_key`` names one."""


def reward_func(
    verifier: VerifierSpec | Mapping[str, Any] = "math",
    url: str | None = None,
    *,
    api_key: str | None = None,
    reference_key: str | None = None,
    name: str | None = None,
    client: Any = None,
) -> RewardFunction:
    """A TRL reward function scoring completions with ``verifier`` on the service at ``url``.

    ``url`` defaults to ``REWARDHUB_URL``, ``api_key`` to ``REWARDHUB_API_KEY``; ``name`` (what TRL
    logs it as) to ``rewardhub_<verifier>``. ``client`` replaces the HTTP client (tests).
    """
    return RewardFunction(verifier, url, api_key=api_key, reference_key=reference_key, name=name, client=client)


def async_reward_func(
    verifier: VerifierSpec | Mapping[str, Any] = "math",
    url: str | None = None,
    *,
    api_key: str | None = None,
    reference_key: str | None = None,
    name: str | None = None,
    client: Any = None,
) -> AsyncRewardFunction:
    """The async twin of :func:`reward_func`."""
    return AsyncRewardFunction(verifier, url, api_key=api_key, reference_key=reference_key, name=name, client=client)


class _Base:
    def __init__(
        self,
        verifier: VerifierSpec | Mapping[str, Any],
        url: str | None,
        *,
        api_key: str | None,
        reference_key: str | None,
        name: str | None,
        client: Any,
    ) -> None:
        self.verifier = verifier
        self.url = url
        self.api_key = api_key if api_key is not None else os.environ.get("REWARDHUB_API_KEY")
        self.reference_key = reference_key
        self.__name__ = name or f"rewardhub_{_label(verifier)}"
        self._client = client

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (TRL and accelerate may copy reward functions): the HTTP client stays behind."""
        state = dict(self.__dict__)
        state["_client"] = None
        return state

    def _samples(self, prompts: Sequence[Any], completions: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Sample]:
        return build_samples(prompts, completions, kwargs, self.reference_key)

    def _finish(self, results: Sequence[Result], kwargs: Mapping[str, Any]) -> list[float | None]:
        log_to_trl(self.__name__, results, kwargs)
        return trl_rewards(results)


class RewardFunction(_Base):
    """TRL reward function (sync). Build it with :func:`reward_func`."""

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        if self._client is None:
            from rewardhub.client import RewardClient

            self._client = RewardClient(self.url, api_key=self.api_key)
        results = self._client.score(self._samples(prompts, completions, kwargs), self.verifier)
        return self._finish(results, kwargs)


class AsyncRewardFunction(_Base):
    """TRL reward function (async). Build it with :func:`async_reward_func`."""

    _loop: asyncio.AbstractEventLoop | None = None

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        client = self._async_client()
        results = await client.score(self._samples(prompts, completions, kwargs), self.verifier)
        return self._finish(results, kwargs)

    def _async_client(self) -> Any:
        """An async client lives on one event loop; a call from another loop gets a fresh one."""
        loop = asyncio.get_running_loop()
        if self._client is None or (self._loop is not None and self._loop is not loop):
            from rewardhub.client import AsyncRewardClient

            self._client, self._loop = AsyncRewardClient(self.url, api_key=self.api_key), loop
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_loop", None)
        return state


def trl_rewards(results: Sequence[Result]) -> list[float | None]:
    """Scores, with None where the verifier could not judge."""
    return [result.score if result.status == OK else None for result in results]


def build_samples(
    prompts: Sequence[Any], completions: Sequence[Any], columns: Mapping[str, Any], reference_key: str | None = None
) -> list[Sample]:
    """One sample per completion; completions of the same prompt share a group."""
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    references = _references(columns, reference_key, len(completions))
    groups: dict[str, str] = {}
    samples = []
    for prompt, completion, reference in zip(prompts, completions, references, strict=True):
        prompt_value = _prompt(prompt)
        key = (
            prompt_value if isinstance(prompt_value, str) else "\n".join(f"{m.role}: {m.content}" for m in prompt_value)
        )
        group = groups.setdefault(key, str(len(groups)))
        samples.append(
            Sample(prompt=prompt_value, response=completion_text(completion), reference=reference, group=group)
        )
    return samples


def completion_text(completion: Any) -> str:
    """The text to score: a string as it is; a conversation's assistant messages, joined."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        messages = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in messages if m.get("role") == "assistant"] or messages
        return "\n".join(_content_text(m.get("content")) for m in assistant)
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


def log_to_trl(name: str, results: Sequence[Result], kwargs: Mapping[str, Any]) -> None:
    """Status rates and component means to ``log_metric``; statuses to ``log_extra``."""
    log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
    if callable(log_metric):
        for key, values in batch_logs(results).items():
            present = [v for v in values if not math.isnan(v)]
            if present:
                log_metric(f"{name}/{key}", sum(present) / len(present))
    log_extra: Callable[[str, list[Any]], None] | None = kwargs.get("log_extra")
    if callable(log_extra):
        log_extra(f"{name}_status", [result.status for result in results])


def _references(columns: Mapping[str, Any], reference_key: str | None, n: int) -> list[Any]:
    if reference_key is not None:
        if reference_key not in columns:
            raise KeyError(f"reference column {reference_key!r} is not in the batch (columns: {sorted(columns)})")
        values = columns[reference_key]
    else:
        values = next((columns[key] for key in REFERENCE_COLUMNS if key in columns), None)
    if values is None:
        return [None] * n
    values = list(values)
    if len(values) != n:
        raise ValueError(f"reference column has {len(values)} values for {n} completions")
    return values


def _prompt(prompt: Any) -> str | list[ChatMessage] | None:
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        return [
            ChatMessage(role=str(m.get("role", "user")), content=_content_text(m.get("content")))
            for m in prompt
            if isinstance(m, Mapping)
        ]
    return str(prompt)


def _content_text(content: Any) -> str:
    """Message content as text: a string, or the text blocks of a multimodal content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            block.get("text", "") if isinstance(block, Mapping) else str(block)
            for block in content
            if not isinstance(block, Mapping) or block.get("type", "text") == "text"
        )
    return str(content)


def _label(verifier: Any) -> str:
    if isinstance(verifier, str):
        return verifier
    if isinstance(verifier, Mapping):
        if "name" in verifier:
            return str(verifier["name"])
        return next((key for key in ("sum", "gate") if key in verifier), "composite")
    return getattr(verifier, "name", None) or "composite"
