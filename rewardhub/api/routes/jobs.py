"""``POST /v1/jobs`` and ``GET /v1/jobs/{id}``: a batch scored in the background, polled for its results.

The job runs through the same score pipeline as ``POST /v1/score`` (:mod:`rewardhub.api.pipeline`),
admitted when it is submitted; the job store (:mod:`rewardhub.jobs`) keeps it under the key that
submitted it.
"""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Depends, Request

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, caller_grant, caller_owner, require_key
from rewardhub.api.schemas import JobAccepted, ScoreRequest
from rewardhub.jobs.records import JobState

__all__ = ["router"]

router = APIRouter(dependencies=[Depends(require_key)])


@router.post("/v1/jobs", status_code=202)
async def submit_job(request: Request, service: ServiceDep) -> JobAccepted:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), ScoreRequest)
    admitted = service.pipeline.admit(body.samples, body.verifier, body.run, body.cache, partial(caller_grant, request))
    return JobAccepted(job_id=service.jobs.submit(len(admitted.samples), admitted.score, caller_owner(request)))


@router.get("/v1/jobs/{job_id}")
async def job_state(job_id: str, request: Request, service: ServiceDep) -> JobState:
    """A job is the key's that submitted it: another key is told 404, as for an unknown id."""
    return service.jobs.state(job_id, caller_owner(request))
