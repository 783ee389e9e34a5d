"""TRL: reward functions for ``GRPOTrainer`` (and TRL's other online trainers) scored by the service.

``reward_func(verifier="math")`` returns a callable with TRL's reward signature
``(prompts, completions, completion_ids, **kwargs) -> list[float | None]``; ``async_reward_func``
is its async twin, which TRL runs concurrently with other async reward functions. The twin is a
plain coroutine function, because TRL releases up to at least 1.10 decide whether to await a
reward function with ``inspect.iscoroutinefunction``, which is False for an object whose
``__call__`` is async: such an object would be called synchronously and its coroutine never awaited.

- **Completions** may be plain strings or conversations (lists of ``{"role", "content"}``
  messages, content possibly a list of text blocks, assistant turns possibly with ``tool_calls``
  and ``tool`` results between them). A conversation is sent whole as the sample's ``messages``:
  text verifiers read its last assistant turn, ``tool_call`` its calls, judges all of it.
- **References** come from the dataset columns TRL passes as keyword arguments: the first of
  ``reference``, ``solution``, ``answer``, ``ground_truth``, ``label`` that is present, or the
  column named by ``reference_key``.
- **Groups**: completions of one prompt share a ``group``, so group verifiers (majority vote,
  pass@k) see the whole group.
- **None** where the verifier could not judge (timeout, error): TRL turns it into NaN. Its
  weighted sum over reward functions is a ``nansum``, so a NaN counts as 0 there when another
  reward function scored the completion; only a completion that every reward function left at
  None is kept out of the group baseline (TRL >= 1.6; older releases give it a 0 too). A service
  that cannot be reached, or that refuses the request (unknown verifier, bad config), raises.
- **Logs**: through TRL's ``log_metric``, the batch's status rates and the mean score of each
  component of a composite (``<name>/status/ok``, ``<name>/component/format``, see
  :mod:`rewardhub.result_logs`); through ``log_extra``, each completion's status in the
  completions table.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from rewardhub.integrations.common import (
    as_reference,
    chat_messages,
    chat_prompt,
    content_text,
    service_spec,
    shared_async_client,
    shared_client,
    verifier_label,
)
from rewardhub.result_logs import batch_logs
from rewardhub.types import OK, Result, Sample, VerifierSpec

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

    ``url`` defaults to ``REWARDHUB_URL``, ``api_key`` to ``REWARDHUB_API_KEY`` (read at each call);
    ``name`` (what TRL logs it as) to ``rewardhub_<verifier>``. Every reward function of a process
    shares one client per service; ``client`` replaces it (tests).
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
) -> Callable[..., Awaitable[list[float | None]]]:
    """The async twin of :func:`reward_func`: a coroutine function, which every TRL from 0.27 on awaits.

    Named ``name`` (TRL's log name) like the sync one; the :class:`AsyncRewardFunction` it calls is
    its ``reward_function`` attribute.
    """
    instance = AsyncRewardFunction(
        verifier, url, api_key=api_key, reference_key=reference_key, name=name, client=client
    )

    async def score(
        prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        return await instance(prompts, completions, completion_ids, **kwargs)

    score.__name__ = score.__qualname__ = instance.__name__
    score.reward_function = instance  # type: ignore[attr-defined]
    return score


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
        self.api_key = api_key
        self.reference_key = reference_key
        self.__name__ = name or f"rewardhub_{verifier_label(verifier)}"
        self._client = client

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (TRL and accelerate may copy reward functions): an injected client stays behind."""
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
        client = self._client if self._client is not None else shared_client(service_spec(self.url, self.api_key))
        results = client.score(self._samples(prompts, completions, kwargs), self.verifier)
        return self._finish(results, kwargs)


class AsyncRewardFunction(_Base):
    """TRL reward function (async). :func:`async_reward_func` hands it to TRL as a coroutine function."""

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        # an async client lives on one event loop: the shared one is this loop's
        client = self._client if self._client is not None else shared_async_client(service_spec(self.url, self.api_key))
        results = await client.score(self._samples(prompts, completions, kwargs), self.verifier)
        return self._finish(results, kwargs)


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
        prompt_value = chat_prompt(prompt)
        key = (
            prompt_value if isinstance(prompt_value, str) else "\n".join(f"{m.role}: {m.content}" for m in prompt_value)
        )
        group = groups.setdefault(key, str(len(groups)))
        samples.append(_sample(prompt_value, completion, reference, group))
    return samples


def _sample(prompt: Any, completion: Any, reference: Any, group: str) -> Sample:
    if isinstance(completion, str) or not isinstance(completion, Sequence | Mapping):
        return Sample(prompt=prompt, response=completion_text(completion), reference=reference, group=group)
    messages = chat_messages(completion)
    if not any(m.role == "assistant" for m in messages):  # no assistant turn: the text is all there is to score
        return Sample(prompt=prompt, response=completion_text(completion), reference=reference, group=group)
    return Sample(prompt=prompt, messages=messages, reference=reference, group=group)


def completion_text(completion: Any) -> str:
    """The text to score: a string as it is; a conversation's assistant messages, joined."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        messages = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in messages if m.get("role") == "assistant"] or messages
        return "\n".join(content_text(m.get("content")) for m in assistant)
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
    return [as_reference(value) for value in values]
