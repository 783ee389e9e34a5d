"""``POST /v1/graders/run``: ``{"grader", "model_sample", "item"}`` graded by the grader shapes of
reinforcement fine-tuning (OpenAI's ``run`` endpoint for graders; see :mod:`.run`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, require_key

from .run import GraderRunner
from .shapes import RunGraderRequest

__all__ = ["router"]

router = APIRouter(dependencies=[Depends(require_key)])


@router.post("/v1/graders/run")
async def run_grader(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), RunGraderRequest)
    return JSONResponse(await GraderRunner(service.pipeline).run(body))
