"""``GET /ui``: the operator page, and the JSON it polls, behind the service's API keys.

| path | answer |
| --- | --- |
| ``GET /ui`` | the page (HTML; its script and style come from ``/ui/static``, nothing from elsewhere) |
| ``GET /ui/api/stats`` | per verifier and per run: samples, samples/s, latency p50/p99, statuses, top errors, reward histogram; the reward cache (hit rate, entries, evictions; null when off); Celery workers |
| ``GET /ui/api/samples?q=&verifier=&run=&status=&limit=`` | the last samples, newest first, filtered; each with ``json_url`` |
| ``GET /ui/api/samples/{key}`` | one sample's full JSON: the sample (unless ``ui_show_samples`` is false) and its result |

A browser cannot add a bearer header to a page it navigates to, so these routes also take the key
as the password of HTTP Basic auth (any user name): a 401 here asks the browser for it.

The page's figures are made in :mod:`rewardhub.ui` (the recorder, the store, the summaries) and its
assets are that package's ``static/``; this module only answers for them.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from rewardhub.api.deps import ServiceDep
from rewardhub.api.service import Service
from rewardhub.errors import ExecutionError, NotFound
from rewardhub.ui.stats import summarise
from rewardhub.ui.workers import WorkerStats

__all__ = ["router"]

STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
NO_STORE = {"Cache-Control": "no-store"}


async def require_ui_key(request: Request, service: ServiceDep) -> None:
    if service.auth.enabled:
        service.auth.admit_browser(request)


router = APIRouter(prefix="/ui", dependencies=[Depends(require_ui_key)], include_in_schema=False)


def _asset(name: str) -> str:
    return resources.files("rewardhub.ui").joinpath("static", name).read_text(encoding="utf-8")


@router.get("")
async def page() -> HTMLResponse:
    return HTMLResponse(_asset("index.html"), headers=NO_STORE)


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        raise NotFound(f"no asset {name!r}")
    return Response(_asset(name), media_type=STATIC[name], headers=NO_STORE)


async def _merged(service: Service) -> dict[str, Any]:
    if service.stats is None:
        raise ExecutionError("the operator page's statistics are off")
    try:
        return await asyncio.to_thread(service.stats.read)
    except Exception as exc:  # Redis down, sqlite file gone: the page says so, scoring goes on
        raise ExecutionError(f"the statistics store cannot be read: {type(exc).__name__}: {exc}") from None


@router.get("/api/stats")
async def stats(request: Request, service: ServiceDep) -> JSONResponse:
    merged = await _merged(service)
    answer = summarise(merged)
    answer["execution"] = service.settings.execution
    answer["show_samples"] = service.settings.ui_show_samples
    if answer["cache"] is not None:  # the bounds the entries and evictions are read against
        answer["cache"]["max_entries"] = service.settings.cache_max_entries
        answer["cache"]["ttl_s"] = service.settings.cache_ttl_s
    workers = _workers(request, service)
    answer["workers"] = await asyncio.to_thread(workers.get) if workers is not None else None
    answer["sessions"] = await asyncio.to_thread(service.sessions.describe)  # may ask the session workers
    return JSONResponse(answer, headers=NO_STORE)


def _workers(request: Request, service: Service) -> WorkerStats | None:
    """One cache per app of the Celery workers' statistics; none in local mode."""
    celery_app = getattr(service.executor, "app", None)
    if service.settings.execution != "celery" or celery_app is None:
        return None
    state = request.app.state
    if getattr(state, "ui_workers", None) is None:
        state.ui_workers = WorkerStats(celery_app)
    return state.ui_workers


SEARCHED = ("id", "verifier", "run", "status", "error", "answer", "reason")


def matches(entry: dict[str, Any], query: str) -> bool:
    """Case-insensitive substring over the row's fields and, when shown, the sample's text."""
    query = query.lower()
    fields = [str(entry.get(key) or "") for key in SEARCHED]
    sample = entry.get("sample") or {}
    fields += [str(sample.get(key) or "") for key in ("prompt", "response", "reference")]
    return any(query in text.lower() for text in fields)


@router.get("/api/samples")
async def samples(
    service: ServiceDep,
    q: Annotated[str, Query(max_length=500)] = "",
    verifier: str | None = None,
    run: str | None = None,
    status: Literal["ok", "timeout", "error"] | None = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
) -> JSONResponse:
    merged = await _merged(service)
    rows = []
    for entry in merged["recent"]:
        if verifier is not None and entry.get("verifier") != verifier:
            continue
        if run is not None and entry.get("run") != run:
            continue
        if status is not None and entry.get("status") != status:
            continue
        if q and not matches(entry, q):
            continue
        rows.append(_row(entry))
        if len(rows) >= limit:
            break
    return JSONResponse({"samples": rows, "kept": len(merged["recent"])}, headers=NO_STORE)


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    sample = entry.get("sample") or {}
    row = {k: v for k, v in entry.items() if k not in ("sample", "result")}
    row["response"] = (sample.get("response") or "")[:300] if sample else None
    row["json_url"] = f"/ui/api/samples/{entry['key']}"
    return row


@router.get("/api/samples/{key}")
async def sample(key: str, service: ServiceDep) -> JSONResponse:
    merged = await _merged(service)
    for entry in merged["recent"]:
        if entry.get("key") == key:
            fields = ("key", "ts", "verifier", "run", "sample", "result")
            return JSONResponse({k: entry.get(k) for k in fields}, headers=NO_STORE)
    raise NotFound(f"sample {key!r} is no longer among the last samples kept")
