"""``POST /v1/audit``: a verifier measured on labelled cases and on the exploit corpus of its family.

Body: ``{"verifier": VerifierSpec, "cases": [{"response" | "messages", "reference", "expected"}],
"threshold": 1.0, "exploits": null | [family, ...]}``; the answer is the audit report (see
:mod:`rewardhub.audit.confusion`). Scoring goes through the service's own scorer, admitted and
counted like ``POST /v1/score``, so the audit's verdicts are the ones a trainer would get.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.service import ServiceDep, require_key
from rewardhub.audit import AuditCase, exploits_for, run_audit
from rewardhub.errors import PayloadTooLarge
from rewardhub.types import VerifierSpec

__all__ = ["AuditRequest", "router"]

router = APIRouter(dependencies=[Depends(require_key)])


class AuditRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verifier: VerifierSpec
    cases: list[AuditCase] = Field(default_factory=list)
    threshold: float = Field(1.0, description="A score at or above this accepts a response.")
    exploits: list[str] | None = Field(
        None, description="Exploit families to run (math, code, judge, format, tool_call); default: the verifier's own."
    )


@router.post("/v1/audit")
async def audit(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), AuditRequest)
    exploits = exploits_for(body.verifier, service.registry, body.exploits)
    total = len(body.cases) + len(exploits)
    limit = service.settings.max_samples_per_request
    if total > limit:
        raise PayloadTooLarge(
            f"{len(body.cases)} cases and {len(exploits)} exploits exceed the limit of {limit} samples per request",
            detail={"limit": limit},
        )

    audited = await run_audit(service.pipeline.score, body.verifier, body.cases, exploits, body.threshold)
    return JSONResponse(audited.report)
