"""NeMo-Gym's resources-server protocol: rewardhub's verifiers behind ``/verify`` and ``/aggregate_metrics``.

NeMo-Gym reaches a resources server at a base URL and posts to ``{base}/verify`` and
``{base}/aggregate_metrics``. Pointing it at ``{rewardhub}/v1/compat/nemo-gym/{verifier}`` serves
that verifier; pointing it at ``{rewardhub}/v1/compat/nemo-gym/{server}``, for a NeMo-Gym server
rewardhub stands in for (``mcqa``, ``instruction_following``...: :mod:`.servers`), reads the request
as that server reads it and scores it with the verifier and config that reproduce its reward:

- ``POST .../{verifier}/verify``: a verify request (see :mod:`rewardhub.api.compat.nemo_gym.convert`) is
  scored as one sample on the service's one score path, and answered as NeMo-Gym's
  ``BaseVerifyResponse``: the request echoed back, with ``reward``. A composite verifier (the body's
  ``verifier``, a weighted sum or gate) adds ``reward_components``, as ``BaseMultiRewardVerifyResponse``
  does. A sample rewardhub could not judge (timeout, error) is not a reward of 0 to train on: it
  answers ``mask_sample: true`` with ``failure_kind`` and ``failure_reason``, which NeMo-Gym leaves
  out of its metrics. ``rewardhub`` carries the result's status, details and per-turn steps.
- ``POST .../{verifier}/verify_batch``: rewardhub's own extension, ``{"verify_requests": [...]}``
  answered as ``{"verify_responses": [...]}`` in order, each as ``/verify`` answers it, in one pass
  through the score path (to re-score a file of rollouts, say).
- ``POST .../{verifier}/aggregate_metrics``: see :mod:`rewardhub.api.compat.nemo_gym.metrics`.

Input that is not a verify request (no ``response.output``, an item without a type, a tool result
without a call, non-text content) is a 4xx with the reason; an unknown verifier is a 404.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.errors import InvalidRequest
from rewardhub.types import OK, Result, Sample, VerifierSpec

from .convert import NemoGymVerifyRequest, to_sample
from .metrics import aggregate_metrics
from .servers import SERVERS, Server, reading_of

__all__ = ["AggregateMetricsRequest", "VerifyBatch", "router", "sample_for", "verify_answer"]

router = APIRouter(dependencies=[Depends(require_key)])

_SPEC: TypeAdapter[VerifierSpec] = TypeAdapter(VerifierSpec)

FAILURE_KINDS = {"timeout": "rewardhub:verifier_timeout", "error": "verifier_error"}
"""rewardhub's statuses as NeMo-Gym failure kinds: ``verifier_error`` is in its shared vocabulary, a
timeout is not, so it takes the ``<server>:<kind>`` form NeMo-Gym keeps for an environment's own kinds."""


class AggregateMetricsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verify_responses: list[dict[str, Any]]


class VerifyBatch(BaseModel):
    """Several verify requests in one body, answered in order (rewardhub's own extension)."""

    model_config = ConfigDict(extra="forbid")

    verify_requests: list[dict[str, Any]] = Field(min_length=1)


@router.post("/v1/compat/nemo-gym/{verifier}/verify")
async def verify(verifier: str, request: Request, service: ServiceDep) -> JSONResponse:
    raw = await read_body(request, service.settings.max_request_bytes)
    body, echo = parse_body(raw, NemoGymVerifyRequest), _echo(raw)
    [result] = await service.pipeline.score([sample_for(verifier, body)], _path_spec(verifier))
    return JSONResponse(verify_answer(echo, result, SERVERS.get(verifier)))


@router.post("/v1/compat/nemo-gym/{verifier}/verify_batch")
async def verify_batch(verifier: str, request: Request, service: ServiceDep) -> JSONResponse:
    echoes, bodies = _batch(await read_body(request, service.settings.max_request_bytes))
    results = await service.pipeline.score([sample_for(verifier, body) for body in bodies], _path_spec(verifier))
    answers = [verify_answer(e, r, SERVERS.get(verifier)) for e, r in zip(echoes, results, strict=True)]
    return JSONResponse({"verify_responses": answers})


@router.post("/v1/compat/nemo-gym/{verifier}/aggregate_metrics")
async def aggregate(verifier: str, request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), AggregateMetricsRequest)
    return JSONResponse(aggregate_metrics(body.verify_responses))


def sample_for(name: str, body: NemoGymVerifyRequest) -> Sample:
    """The sample of one verify request: read as the NeMo-Gym server ``name`` reads it when rewardhub
    stands in for that server (:mod:`.servers`), else generically, for the verifier ``name``. The
    body's own ``verifier`` spec, when it has one, is the sample's verifier."""
    sample = to_sample(body, SERVERS.get(name))
    if body.verifier is not None:
        return sample.model_copy(update={"verifier": _spec(body.verifier)})
    return sample


def verify_answer(request: dict[str, Any], result: Result, server: Server | None = None) -> dict[str, Any]:
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
    reading = reading_of(request, server.readings) if server is not None else None
    if reading is not None:
        answer["rewardhub"]["reading"] = reading
    if server is not None and server.note and reading in (None, "rewardhub"):
        answer["rewardhub"]["differs_from_server"] = server.note
    return answer


def _echo(raw: bytes) -> Any:
    """The body as it will be echoed; NaN and Infinity, which no JSON answer can carry, are refused."""
    return json.loads(raw, parse_constant=_not_a_number)


def _not_a_number(constant: str) -> float:
    raise InvalidRequest(f"{constant} is not a JSON number: the request cannot be echoed back")


def _batch(raw: bytes) -> tuple[list[dict[str, Any]], list[NemoGymVerifyRequest]]:
    """A batch's requests as they will be echoed, and each read as a verify request (a 422 names the
    first that is not one)."""
    parse_body(raw, VerifyBatch)  # the body's shape first, with its 400 or 422
    echoes = _echo(raw)["verify_requests"]
    bodies = []
    for index, echo in enumerate(echoes):
        try:
            bodies.append(NemoGymVerifyRequest.model_validate(echo))
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            raise InvalidRequest(f"verify_requests[{index}] is not a verify request", detail=errors[:20]) from None
    return echoes, bodies


def _path_spec(name: str) -> VerifierSpec | None:
    """The request's default verifier: the one the path names, none for a NeMo-Gym server's name
    (its samples name the verifier that stands in for it)."""
    return None if name in SERVERS else name


def _spec(raw: Any) -> VerifierSpec:
    """The body's own verifier spec."""
    try:
        return _SPEC.validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        raise InvalidRequest("'verifier' is not a verifier spec", detail=errors[:20]) from None
