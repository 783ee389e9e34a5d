"""slime's remote reward model protocol, the server side.

- ``POST /v1/compat/slime``: slime's ``--rm-type remote_rm --rm-url .../v1/compat/slime`` posts
  ``{"prompt", "response", "label"}`` per sample and keeps the JSON answer as the sample's reward;
  ``--reward-key`` selects a number from it (``score``, ``reward``, ``acc`` or any ``status/...``
  and ``component/...`` key).
- ``POST /v1/compat/slime/batch``: ``{"samples": [...], "group": bool}``, the same payloads in one
  request, answered as ``{"rewards": [...]}`` in order. The custom reward function of
  :mod:`rewardhub.integrations.slime` sends slime's ``--group-rm`` groups here, so a group
  verifier (majority vote, pass@k) sees the whole group.

A sample's verifier is its ``verifier``, else its ``metadata["verifier"]``, else the server's
``get_reward_verifier``. A trajectory recorded as chat messages in ``metadata["messages"]`` is
scored as a conversation: text verifiers read its last assistant turn, ``tool_call`` its calls,
judges the whole of it.

Both score on the service's one score path (:mod:`rewardhub.api.pipeline`), as ``/v1/score``
does: a sample that could not be judged answers 200 with its status and the verifier's failure
score; a request that cannot be served is an error body with a 4xx/5xx status.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.errors import InvalidRequest
from rewardhub.messages import chat_messages, chat_prompt
from rewardhub.result_logs import sample_logs
from rewardhub.types import OK, Result, Sample, VerifierSpec

__all__ = ["SlimeBatch", "SlimeRequest", "router", "slime_answer", "slime_sample"]

router = APIRouter(dependencies=[Depends(require_key)])


class SlimeRequest(BaseModel):
    """slime's remote RM payload, plus optional ``metadata``, ``verifier`` and slime's sample indices."""

    model_config = ConfigDict(extra="forbid")

    prompt: str | list[dict[str, Any]] | dict[str, Any] | None = None
    response: str
    label: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierSpec | None = None
    index: int | str | None = None
    group_index: int | str | None = None


class SlimeBatch(BaseModel):
    """Several slime payloads; ``group`` makes them one group (slime's ``--group-rm``)."""

    model_config = ConfigDict(extra="forbid")

    samples: list[SlimeRequest]
    group: bool = False


@router.post("/v1/compat/slime")
async def slime(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SlimeRequest)
    [result] = await service.pipeline.score([slime_sample(body)], service.settings.get_reward_verifier)
    return JSONResponse(slime_answer(result))


@router.post("/v1/compat/slime/batch")
async def slime_batch(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SlimeBatch)
    samples = [slime_sample(payload, position) for position, payload in enumerate(body.samples)]
    if body.group:  # one prompt's samples: a group, even without group_index
        samples = [s if s.group is not None else s.model_copy(update={"group": "group"}) for s in samples]
    results = await service.pipeline.score(samples, service.settings.get_reward_verifier)
    return JSONResponse({"rewards": [slime_answer(result) for result in results]})


def slime_sample(body: SlimeRequest, position: int = 0) -> Sample:
    """A rewardhub sample from a slime payload; a malformed prompt or trajectory is a 422 naming it."""
    metadata = dict(body.metadata)
    spec = body.verifier or metadata.pop("verifier", None)
    trajectory = metadata.pop("messages", None)
    try:
        prompt = chat_prompt(body.prompt)
        text = {"messages": chat_messages(trajectory)} if trajectory is not None else {"response": body.response}
    except ValueError as exc:
        raise InvalidRequest(f"samples[{position}]: {exc}") from None
    return Sample(
        id=str(body.index if body.index is not None else position),
        prompt=prompt,
        **text,
        reference=body.label,
        verifier=spec,
        group=str(body.group_index) if body.group_index not in (None, "") else None,
        metadata=metadata,
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
