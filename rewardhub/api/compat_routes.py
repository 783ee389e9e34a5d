"""Routes that speak other trainers' reward protocols: slime's remote RM and OpenAI-style graders.

- ``POST /v1/compat/slime``: slime's ``--rm-type remote_rm --rm-url .../v1/compat/slime`` posts
  ``{"prompt", "response", "label"}`` per sample and keeps the JSON answer as the sample's reward;
  ``--reward-key`` selects a number from it (``score``, ``reward``, ``acc`` or any ``status/...``
  and ``component/...`` key). The verifier is the body's ``verifier``, else its
  ``metadata["verifier"]``, else the server's ``get_reward_verifier``.
- ``POST /v1/graders/run``: ``{"grader", "model_sample", "item"}`` graded by the grader shapes of
  reinforcement fine-tuning (see :mod:`rewardhub.integrations.graders.run`).

A sample that could not be judged answers 200 with its status and the verifier's failure score,
like ``/v1/score``; a request that cannot be served is an error body with a 4xx/5xx status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.routing import Match

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.service import Service, ServiceDep, require_key
from rewardhub.errors import ExecutionError, InvalidRequest, Overloaded
from rewardhub.integrations.graders.python_grader import SandboxRun
from rewardhub.integrations.graders.run import GraderRunner
from rewardhub.integrations.graders.shapes import RunGraderRequest
from rewardhub.integrations.slime import slime_answer, slime_prompt
from rewardhub.types import Sample, VerifierSpec

__all__ = ["SlimeRequest", "router"]

router = APIRouter(dependencies=[Depends(require_key)])

SANDBOX_PATH = "/v1/sandbox/run"


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
    nodes = service.scorer.plan([sample], spec)
    _admit(service, 1)
    [result] = await service.scorer.score([sample], nodes=nodes)
    service.metrics.observe_results(nodes, [result])
    return JSONResponse(slime_answer(result))


@router.post("/v1/graders/run")
async def run_grader(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), RunGraderRequest)
    runner = GraderRunner(service, _sandbox(request))
    return JSONResponse(await runner.run(body))


def _sandbox(request: Request) -> SandboxRun | None:
    """The sandbox behind this very app's ``POST /v1/sandbox/run``, when the app has that route.

    Going through the route (in process, no socket) keeps one way into the sandbox, with its
    limits and its error answers, whatever the sandbox's internals become.
    """
    scope = {"type": "http", "path": SANDBOX_PATH, "method": "POST", "root_path": "", "path_params": {}}
    if not any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
        return None
    headers = {"authorization": request.headers["authorization"]} if "authorization" in request.headers else {}

    async def run(body: dict[str, Any]) -> Mapping[str, Any]:
        transport = httpx.ASGITransport(app=request.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://rewardhub.internal", headers=headers
        ) as client:
            response = await client.post(SANDBOX_PATH, json=body, timeout=None)
        try:
            answer = response.json()
        except ValueError:
            answer = {"error": {"message": response.text[:300]}}
        if response.status_code == 429:
            raise Overloaded("the sandbox is overloaded", retry_after=float(response.headers.get("retry-after", 1)))
        if response.status_code != 200:
            message = answer.get("error", {}).get("message") if isinstance(answer, dict) else response.text[:300]
            error = InvalidRequest if response.status_code < 500 else ExecutionError
            raise error(f"the sandbox refused the python grader ({response.status_code}): {message}")
        return answer

    return run


def _admit(service: Service, n: int) -> None:
    try:
        service.executor.admit(n)
    except Overloaded:
        service.metrics.rejected.labels("overloaded").inc()
        raise
