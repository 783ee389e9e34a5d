"""slime: a custom reward function (``--custom-rm-path rewardhub.integrations.slime.reward``).

slime calls the function at ``--custom-rm-path`` as ``await fn(args, sample)`` per sample and, with
``--group-rm``, as ``await fn(args, samples)`` per group; :func:`reward` takes both and sends one
request to the service either way (``POST /v1/compat/slime/batch``, so a group verifier such as
majority vote sees the group). Each reward is the object ``POST /v1/compat/slime`` answers (the
server side of the protocol, :mod:`rewardhub.api.compat.slime`), so pick the number with
``--reward-key score`` (or ``acc``, ``status/ok``, ``component/<name>``).

The verifier is ``sample.metadata["verifier"]``, else ``REWARDHUB_VERIFIER`` (a name or JSON
spec), else ``math``; the service is at ``REWARDHUB_URL``. Without the helper, point slime's own
remote RM at the service: ``--rm-type remote_rm --rm-url http://HOST:8000/v1/compat/slime``.

**A sample the service could not judge** (status ``timeout`` or ``error``) gets the verifier's
failure score in its reward object, and :func:`reward` sets ``sample.remove_sample = True`` on it:
slime's own discard, which zeroes the sample's loss mask when the rollout becomes training data
(``RolloutManager._convert_samples_to_train_data``). Its reward still enters its group's reward
normalisation there (slime normalises before it masks); the status, error and ``status/ok`` stay
in the reward object for the logs. ``sample.status`` is left alone: slime's generation reads it
(only ``PENDING`` or ``ABORTED`` samples are generated, ``COMPLETED`` and ``TRUNCATED`` ones are
done), so a ``FAILED`` set here would break a partial rollout that resumes the sample. slime's own
``remote_rm`` stores the reward object only: with it, the sample trains with the failure score.

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
    json_fields,
    plain,
    service_spec,
    shared_async_client,
    verifier_spec,
)
from rewardhub.types import OK

__all__ = ["reward", "slime_payload"]

DEFAULT_VERIFIER = "math"


async def reward(args: Any, sample: Any, **kwargs: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """slime's custom reward: one sample in, one reward object out; a list in, a list out."""
    group = list(sample) if isinstance(sample, Sequence) and not isinstance(sample, str | bytes) else None
    slime_samples = group if group is not None else [sample]
    body = {"samples": [slime_payload(s, index) for index, s in enumerate(slime_samples)], "group": group is not None}
    answer = await shared_async_client(service_spec()).request("POST", "/v1/compat/slime/batch", body)
    rewards: list[dict[str, Any]] = answer["rewards"]  # one client per event loop, shared by the calls
    for slime_sample, judged in zip(slime_samples, rewards, strict=True):
        if judged.get("status") != OK:
            slime_sample.remove_sample = True  # slime zeroes its loss mask: no judgement, no gradient
    return rewards if group is not None else rewards[0]


def slime_payload(sample: Any, index: int = 0) -> dict[str, Any]:
    """The wire payload of a slime ``Sample`` (prompt, response, label, metadata, its indices).

    Prompts and trajectories go as the plain values slime holds; the service reads them into chat
    messages and says what is wrong with one that is not (a 422 naming the sample).
    """
    metadata = json_fields(dict(getattr(sample, "metadata", None) or {}))
    spec = metadata.pop("verifier", None) or verifier_spec(default=DEFAULT_VERIFIER)
    return {
        "prompt": plain(getattr(sample, "prompt", None)),
        "response": getattr(sample, "response", "") or "",
        "label": as_reference(getattr(sample, "label", None)),
        "metadata": metadata,
        "verifier": spec if isinstance(spec, str | dict) else spec.model_dump(mode="json"),
        "index": getattr(sample, "index", index),
        "group_index": getattr(sample, "group_index", None),
    }
