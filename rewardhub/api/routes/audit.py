"""``POST /v1/audit``: a verifier measured on labelled cases and on the exploit corpus of its family;
``POST /v1/reverify``: stored samples scored again, with the verdict diff ``rewardhub reverify`` prints.

Body: ``{"verifier": VerifierSpec, "cases": [{"response" | "messages", "reference", "expected"}],
"threshold": 1.0, "exploits": null | [family, ...]}``; the answer is the audit report (see
:mod:`rewardhub.audit.confusion`). Scoring goes through the service's own scorer, admitted and
counted like ``POST /v1/score``, so the audit's verdicts are the ones a trainer would get.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.audit import AuditCase, exploits_for, run_audit
from rewardhub.audit.reverify import run_reverify
from rewardhub.audit.stored import stored_from_json
from rewardhub.errors import PayloadTooLarge
from rewardhub.types import Result, Sample, VerifierSpec

__all__ = ["AuditRequest", "ReverifyRequest", "router"]

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


class ReverifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verifier: VerifierSpec
    samples: list[dict[str, Any]] = Field(
        description="Samples with their old result (\"result\"), rows of the trainer's dumps or the operator page's "
        "sample entries, as rewardhub reverify reads them."
    )
    against: VerifierSpec | None = Field(None, description="Score the old side with this spec instead.")
    threshold: float = Field(1.0, description="A score at or above this passes.")


@router.post("/v1/reverify")
async def reverify(request: Request, service: ServiceDep) -> JSONResponse:
    body = parse_body(await read_body(request, service.settings.max_request_bytes), ReverifyRequest)
    limit = service.settings.max_samples_per_request
    if len(body.samples) * (2 if body.against is not None else 1) > limit:
        raise PayloadTooLarge(
            f"{len(body.samples)} samples exceed the limit of {limit} per request", detail={"limit": limit}
        )
    stored = [stored_from_json(raw, f"samples[{i}]") for i, raw in enumerate(body.samples)]

    async def score(samples: list[Sample], spec: VerifierSpec) -> list[Result]:
        return await service.pipeline.score(samples, spec, cache=False)  # served verdicts would hide every flip

    return JSONResponse(await run_reverify(score, body.verifier, stored, body.against, body.threshold))
