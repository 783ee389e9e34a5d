"""Routes that speak other trainers' reward protocols: slime's remote RM and OpenAI-style graders.

- ``POST /v1/compat/slime``: slime's ``--rm-type remote_rm --rm-url .../v1/compat/slime`` posts
  ``{"prompt", "response", "label"}`` per sample and keeps the JSON answer as the sample's reward;
  ``--reward-key`` selects a number from it (``score``, ``reward``, ``acc`` or any ``status/...``
  and ``component/...`` key). The verifier is the body's ``verifier``, else its
  ``metadata["verifier"]``, else the server's ``get_reward_verifier``.
- ``POST /v1/graders/run``: ``{"grader", "model_sample", "item"}`` graded by the grader shapes of
  reinforcement fine-tuning (see :mod:`rewardhub.integrations.graders.run`).

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
from rewardhub.api.service import ServiceDep, require_key
from rewardhub.integrations.graders.run import GraderRunner
from rewardhub.integrations.graders.shapes import RunGraderRequest
from rewardhub.integrations.slime import slime_answer, slime_prompt
from rewardhub.types import Sample, VerifierSpec

__all__ = ["SlimeRequest", "router"]

router = APIRouter(dependencies=[Depends(require_key)])


class SlimeRequest(BaseModel):
    """slime's remote RM payload, plus optional ``metadata`` and ``verifier``."""

    model_config = ConfigDict(extra="forbid")

    prompt: str | list[dict[str, Any]] | None = None
    response: str
    label: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierSpec | None = None


@router.post("/v1/compat/slime")
async def slime(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), SlimeRequest)
    spec = body.verifier or body.metadata.get("verifier") or service.settings.get_reward_verifier
    sample = Sample(
        prompt=slime_prompt(body.prompt), response=body.response, reference=body.label, metadata=body.metadata
    )
    [result] = await service.pipeline.score([sample], spec)
    return JSONResponse(slime_answer(result))


@router.post("/v1/graders/run")
async def run_grader(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), RunGraderRequest)
    return JSONResponse(await GraderRunner(service.pipeline).run(body))
