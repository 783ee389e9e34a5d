"""slime: a custom reward function (``--custom-rm-path rewardhub.integrations.slime.reward``).

slime calls the function at ``--custom-rm-path`` as ``await fn(args, sample)`` per sample and, with
``--group-rm``, as ``await fn(args, samples)`` per group; :func:`reward` takes both and sends one
request to the service either way (so a group verifier such as majority vote sees the group).
Each reward is the same object as ``POST /v1/compat/slime`` answers, so pick the number with
``--reward-key score`` (or ``acc``, ``status/ok``, ``component/<name>``).

The verifier is ``sample.metadata["verifier"]``, else ``REWARDHUB_VERIFIER`` (a name or JSON
spec), else ``math``; the service is at ``REWARDHUB_URL``. Without the helper, point slime's own
remote RM at the service: ``--rm-type remote_rm --rm-url http://HOST:8000/v1/compat/slime``.

A multi-turn rollout keeps its turns in ``sample.response`` as one text. A custom generate function
that records the trajectory as chat messages in ``sample.metadata["messages"]`` has it scored as a
conversation instead: text verifiers read its last assistant turn, ``tool_call`` its calls,
judges the whole of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardhub.integrations.common import (
    as_reference,
    chat_messages,
    chat_prompt,
    json_fields,
    service_spec,
    shared_async_client,
    verifier_spec,
)
from rewardhub.integrations.logs import sample_logs
from rewardhub.types import OK, ChatMessage, Result, Sample

__all__ = ["reward", "sample_from_slime", "slime_answer", "slime_prompt"]

DEFAULT_VERIFIER = "math"


async def reward(args: Any, sample: Any, **kwargs: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """slime's custom reward: one sample in, one reward object out; a list in, a list out."""
    group = list(sample) if isinstance(sample, Sequence) and not isinstance(sample, str | bytes) else None
    slime_samples = group if group is not None else [sample]
    samples = [sample_from_slime(s, index) for index, s in enumerate(slime_samples)]
    if group is not None:  # slime hands over one prompt's samples: a group, even without group_index
        samples = [s if s.group is not None else s.model_copy(update={"group": "group"}) for s in samples]
    results = await shared_async_client(service_spec()).score(samples)  # one client per event loop
    answers = [slime_answer(result) for result in results]
    return answers if group is not None else answers[0]


def sample_from_slime(sample: Any, index: int = 0) -> Sample:
    """A rewardhub sample from a slime ``Sample`` (prompt, response, label, metadata)."""
    metadata = dict(getattr(sample, "metadata", None) or {})
    spec = metadata.pop("verifier", None) or verifier_spec(default=DEFAULT_VERIFIER)
    trajectory = metadata.pop("messages", None)
    text = {"messages": chat_messages(trajectory)} if trajectory is not None else {}
    return Sample(
        id=str(getattr(sample, "index", index)),
        prompt=slime_prompt(getattr(sample, "prompt", None)),
        response=None if trajectory is not None else getattr(sample, "response", "") or "",
        **text,
        reference=as_reference(getattr(sample, "label", None)),
        verifier=spec,
        group=str(getattr(sample, "group_index", "") or "") or None,
        metadata=json_fields(metadata),
    )


def slime_answer(result: Result) -> dict[str, Any]:
    """The reward object slime stores; every number in it can be a ``--reward-key``."""
    return {
        "score": result.score,
        "reward": result.score,
        "acc": float(result.status == OK and result.score >= 1.0),
        **sample_logs(result),
        "status": result.status,
        "error": result.error,
        "details": result.model_dump(mode="json")["details"],
    }


def slime_prompt(prompt: Any) -> str | list[ChatMessage] | None:
    """slime's prompt is text or chat messages (whose content may be a list of parts)."""
    return chat_prompt(prompt)
