"""The v1 routes of API.md. Handlers are thin: parse, hand to the score pipeline, answer.

Planning, admission, scoring and metrics live in :mod:`rewardhub.api.pipeline`, the one score path
every route, job and compatibility endpoint shares.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.metrics import CONTENT_TYPE_LATEST
from rewardhub.api.schemas import JobAccepted, ScoreRequest, ScoreResponse
from rewardhub.api.service import ServiceDep, require_key
from rewardhub.api.session_routes import caller_grant, caller_owner
from rewardhub.jobs.records import JobState

__all__ = ["public", "protected"]

public = APIRouter()
protected = APIRouter(dependencies=[Depends(require_key)])


@public.get("/healthz")
async def healthz() -> dict[str, Any]:
    """``pid`` names the API process that answered: with ``--api-workers N`` there are N of them."""
    return {"status": "ok", "pid": os.getpid()}


@public.get("/readyz")
async def readyz(service: ServiceDep) -> JSONResponse:
    reasons = service.executor.readiness() if service.started else ["starting"]
    if reasons:
        return JSONResponse({"status": "not_ready", "reasons": reasons}, status_code=503)
    return JSONResponse({"status": "ready", "verifiers": len(service.registry.names())})


@public.get("/metrics")
async def metrics(service: ServiceDep) -> Response:
    return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@protected.get("/v1/verifiers")
async def list_verifiers(service: ServiceDep) -> dict[str, Any]:
    return {"verifiers": service.registry.describe()}


@protected.post("/v1/score", response_model=ScoreResponse)
async def score(request: Request, service: ServiceDep) -> Response:
    """Answered ahead of FastAPI's router by :mod:`rewardhub.api.hot_routes`, which calls this function."""
    started = time.perf_counter()
    body = parse_body(await read_body(request, service.settings.max_request_bytes), ScoreRequest)
    results = await service.pipeline.score(
        body.samples, body.verifier, body.run, body.cache, partial(caller_grant, request)
    )
    answer = ScoreResponse(results=results, elapsed_ms=(time.perf_counter() - started) * 1000)
    return Response(answer.model_dump_json(), media_type="application/json")


@protected.post("/v1/jobs", status_code=202)
async def submit_job(request: Request, service: ServiceDep) -> JobAccepted:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), ScoreRequest)
    admitted = service.pipeline.admit(body.samples, body.verifier, body.run, body.cache, partial(caller_grant, request))
    return JobAccepted(job_id=service.jobs.submit(len(admitted.samples), admitted.score, caller_owner(request)))


@protected.get("/v1/jobs/{job_id}")
async def job_state(job_id: str, request: Request, service: ServiceDep) -> JobState:
    """A job is the key's that submitted it: another key is told 404, as for an unknown id."""
    return service.jobs.state(job_id, caller_owner(request))
