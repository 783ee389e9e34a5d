"""NeMo-Gym's resources-server protocol: rewardhub's verifiers behind ``/verify`` and ``/aggregate_metrics``.

NeMo-Gym reaches a resources server at a base URL and posts to ``{base}/verify`` and
``{base}/aggregate_metrics``. Pointing it at ``{rewardhub}/v1/compat/nemo-gym/{verifier}`` serves
that verifier:

- ``POST .../{verifier}/verify``: a verify request (see :mod:`rewardhub.api.compat.nemo_gym.convert`) is
  scored as one sample on the service's one score path, and answered as NeMo-Gym's
  ``BaseVerifyResponse``: the request echoed back, with ``reward``. A composite verifier (the body's
  ``verifier``, a weighted sum or gate) adds ``reward_components``, as ``BaseMultiRewardVerifyResponse``
  does. A sample rewardhub could not judge (timeout, error) is not a reward of 0 to train on: it
  answers ``mask_sample: true`` with ``failure_kind`` and ``failure_reason``, which NeMo-Gym leaves
  out of its metrics. ``rewardhub`` carries the result's status, details and per-turn steps.
- ``POST .../{verifier}/aggregate_metrics``: see :mod:`rewardhub.api.compat.nemo_gym.metrics`.

Input that is not a verify request (no ``response.output``, an item without a type, a tool result
without a call, non-text content) is a 4xx with the reason; an unknown verifier is a 404.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.service import ServiceDep, require_key
from rewardhub.errors import InvalidRequest
from rewardhub.types import OK, Result, VerifierSpec

from .convert import NemoGymVerifyRequest, to_sample
from .metrics import aggregate_metrics

__all__ = ["AggregateMetricsRequest", "router", "verify_answer"]

router = APIRouter(dependencies=[Depends(require_key)])

_SPEC: TypeAdapter[VerifierSpec] = TypeAdapter(VerifierSpec)

FAILURE_KINDS = {"timeout": "rewardhub:verifier_timeout", "error": "verifier_error"}
"""rewardhub's statuses as NeMo-Gym failure kinds: ``verifier_error`` is in its shared vocabulary, a
timeout is not, so it takes the ``<server>:<kind>`` form NeMo-Gym keeps for an environment's own kinds."""


class AggregateMetricsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verify_responses: list[dict[str, Any]]


@router.post("/v1/compat/nemo-gym/{verifier}/verify")
async def verify(verifier: str, request: Request, service: ServiceDep) -> JSONResponse:
    raw = await read_body(request, service.settings.max_request_bytes)
    body, echo = parse_body(raw, NemoGymVerifyRequest), _echo(raw)
    [result] = await service.pipeline.score([to_sample(body)], _spec(body.verifier, verifier))
    return JSONResponse(verify_answer(echo, result))


@router.post("/v1/compat/nemo-gym/{verifier}/aggregate_metrics")
async def aggregate(verifier: str, request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), AggregateMetricsRequest)
    return JSONResponse(aggregate_metrics(body.verify_responses))


def verify_answer(request: dict[str, Any], result: Result) -> dict[str, Any]:
    """The verify request echoed back with the reward, in NeMo-Gym's response shape."""
    answer = {**request, "reward": result.score}
    components = result.details.get("components")
    if isinstance(components, dict):
        answer["reward_components"] = {name: float(part["score"]) for name, part in components.items()}
    if result.status != OK:
        answer["mask_sample"] = True
        answer["failure_kind"] = FAILURE_KINDS.get(result.status, "verifier_error")
        answer["failure_reason"] = result.error
    answer["rewardhub"] = {
        "status": result.status,
        "error": result.error,
        "details": result.details,
        "steps": result.steps,
    }
    return answer


def _echo(raw: bytes) -> dict[str, Any]:
    """The body as it will be echoed; NaN and Infinity, which no JSON answer can carry, are refused."""
    return json.loads(raw, parse_constant=_not_a_number)


def _not_a_number(constant: str) -> float:
    raise InvalidRequest(f"{constant} is not a JSON number: the request cannot be echoed back")


def _spec(raw: Any, named: str) -> VerifierSpec:
    """The body's verifier spec when it has one, else the verifier named in the path."""
    if raw is None:
        return named
    try:
        return _SPEC.validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        raise InvalidRequest("'verifier' is not a verifier spec", detail=errors[:20]) from None
