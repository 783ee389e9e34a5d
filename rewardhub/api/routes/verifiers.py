"""``GET /v1/verifiers``: every verifier the service has, with its kind and config schema."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from rewardhub.api.deps import ServiceDep, require_key

__all__ = ["router"]

router = APIRouter(dependencies=[Depends(require_key)])


@router.get("/v1/verifiers")
async def list_verifiers(service: ServiceDep) -> dict[str, Any]:
    return {"verifiers": service.registry.describe()}
