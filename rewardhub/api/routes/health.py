"""``GET /healthz``, ``GET /readyz`` and ``GET /metrics``: open to anyone, as API.md has them.

A load balancer or an orchestrator asks these without a key: liveness, readiness (the executor's
reasons it cannot score yet) and the Prometheus text of :mod:`rewardhub.api.metrics`.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from rewardhub.api.deps import ServiceDep
from rewardhub.api.metrics import CONTENT_TYPE_LATEST

__all__ = ["router"]

router = APIRouter()


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    """``pid`` names the API process that answered: with ``--api-workers N`` there are N of them."""
    return {"status": "ok", "pid": os.getpid()}


@router.get("/readyz")
async def readyz(service: ServiceDep) -> JSONResponse:
    reasons = service.executor.readiness() if service.started else ["starting"]
    if reasons:
        return JSONResponse({"status": "not_ready", "reasons": reasons}, status_code=503)
    return JSONResponse({"status": "ready", "verifiers": len(service.registry.names())})


@router.get("/metrics")
async def metrics(service: ServiceDep) -> Response:
    return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)
