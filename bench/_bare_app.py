"""The baseline of bench/overhead.py: a bare FastAPI endpoint doing the same JSON in and out.

What a user writes instead of running a service: one route that parses the same request body
with pydantic (unknown fields refused), applies the same normalised ``exact`` comparison in the
handler, and answers the same result shape. No auth, no limits, no metrics, no request ids, no
pools: its cost is the floor that any FastAPI service pays for this JSON.

    python -m uvicorn _bare_app:app --app-dir bench --port P
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel, ConfigDict

from rewardhub.verifiers.text import normalize_text, strip_think

app = FastAPI()


class _Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    response: str
    reference: Any = None


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verifier: Any = None
    samples: list[_Sample]


class _Result(BaseModel):
    id: str | None = None
    score: float
    status: str = "ok"
    error: str | None = None
    details: dict[str, Any]
    steps: list[float] | None = None
    elapsed_ms: float


class _Answer(BaseModel):
    results: list[_Result]
    elapsed_ms: float


def _norm(text: str) -> str:
    return normalize_text(text, case=False, whitespace=False, punctuation=True)


@app.post("/v1/score")
async def score(request: Request) -> Response:
    started = time.perf_counter()
    body = _Body.model_validate_json(await request.body())
    results = []
    for sample in body.samples:
        began = time.perf_counter()
        answer = _norm(strip_think(sample.response))
        matched = sample.reference if _norm(str(sample.reference)) == answer else None
        details = {"normalized_response": answer[:200], "matched": matched}
        elapsed = (time.perf_counter() - began) * 1000
        results.append(_Result(id=sample.id, score=float(matched is not None), details=details, elapsed_ms=elapsed))
    answer = _Answer(results=results, elapsed_ms=(time.perf_counter() - started) * 1000)
    return Response(answer.model_dump_json(), media_type="application/json")
