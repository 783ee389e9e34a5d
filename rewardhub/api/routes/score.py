"""``POST /v1/score``: a batch of samples scored now. The handler is thin: parse, hand to the score
pipeline, answer.

Planning, admission, scoring and metrics live in :mod:`rewardhub.api.pipeline`, the one score path
every route, job and compatibility endpoint shares.
"""

from __future__ import annotations

import time
from functools import partial

from fastapi import APIRouter, Depends, Request, Response

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, caller_grant, require_key
from rewardhub.api.schemas import ScoreRequest, ScoreResponse

__all__ = ["router", "score"]

router = APIRouter(dependencies=[Depends(require_key)])


@router.post("/v1/score", response_model=ScoreResponse)
async def score(request: Request, service: ServiceDep) -> Response:
    """Answered ahead of FastAPI's router by :mod:`rewardhub.api.middleware.hot_routes`, which calls this function."""
    started = time.perf_counter()
    body = parse_body(await read_body(request, service.settings.max_request_bytes), ScoreRequest)
    results = await service.pipeline.score(
        body.samples, body.verifier, body.run, body.cache, partial(caller_grant, request)
    )
    answer = ScoreResponse(results=results, elapsed_ms=(time.perf_counter() - started) * 1000)
    return Response(answer.model_dump_json(), media_type="application/json")
