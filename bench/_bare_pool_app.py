"""The baseline of bench/load.py: what a user builds instead of rewardhub for math rewards.

A bare FastAPI endpoint with the same request shape, scoring with math-verify in a warm
``ProcessPoolExecutor`` (verl's recipe: LaTeX gold boxed, expression and LaTeX extraction of the
prediction), each request's samples split into chunks across the pool. No admission bound, no
per-sample hard limit beyond math-verify's own, no auth, metrics or request ids.

    REWARDHUB_BENCH_WORKERS=2 python -m uvicorn _bare_pool_app:app --app-dir bench --port P
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel, ConfigDict

WORKERS = int(os.environ.get("REWARDHUB_BENCH_WORKERS", "2"))
CHUNK = 64
_METRIC: Any = None


def _init() -> None:
    global _METRIC
    from math_verify.metric import math_metric
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

    _METRIC = math_metric(
        gold_extraction_target=(LatexExtractionConfig(),),
        pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()),
    )
    _METRIC(["\\boxed{1}"], ["\\boxed{1}"])


def _score(pairs: list[tuple[str, str]]) -> list[float]:
    out = []
    for gold, response in pairs:
        try:
            out.append(float(_METRIC(["\\boxed{" + gold + "}"], [response])[0]))
        except Exception:
            out.append(0.0)
    return out


class _Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    response: str
    reference: str


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verifier: Any = None
    samples: list[_Sample]


class _Answer(BaseModel):
    results: list[dict[str, Any]]


pool: ProcessPoolExecutor | None = None


@asynccontextmanager
async def lifespan(app: FastAPI):  # noqa: ANN201 - FastAPI's lifespan shape
    global pool
    pool = ProcessPoolExecutor(WORKERS, initializer=_init)
    list(pool.map(_score, [[("1", "\\boxed{1}")]] * (4 * WORKERS)))  # every process warm
    yield
    pool.shutdown(cancel_futures=True)


app = FastAPI(lifespan=lifespan)


@app.get("/readyz")
async def readyz() -> dict[str, str]:
    return {"status": "ready"}


@app.post("/v1/score")
async def score(request: Request) -> Response:
    body = _Body.model_validate_json(await request.body())
    pairs = [(s.reference, s.response) for s in body.samples]
    loop = asyncio.get_running_loop()
    parts = await asyncio.gather(
        *(loop.run_in_executor(pool, _score, pairs[i : i + CHUNK]) for i in range(0, len(pairs), CHUNK))
    )
    results = [{"score": score, "status": "ok"} for part in parts for score in part]
    return Response(_Answer(results=results).model_dump_json(), media_type="application/json")
