"""The API's own description, behind the service's keys: ``/openapi.json``, ``/docs`` and ``/redoc``.

FastAPI serves these itself, to anyone; with keys configured the schema would name every route and
body of a service that is otherwise closed. Here they answer as the operator page does: to a Bearer
key, or to the key as the password of HTTP Basic auth (a browser asks for it on the 401), and to
anyone when the service is open. A 401 on these paths asks for Basic credentials
(:data:`rewardhub.api.errors.DOCS_PATHS`).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from rewardhub.api.deps import require_browser_key

__all__ = ["router"]

router = APIRouter(dependencies=[Depends(require_browser_key)], include_in_schema=False)


@router.get("/openapi.json")
async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs")
async def swagger(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{request.app.title} - Swagger UI")


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(openapi_url="/openapi.json", title=f"{request.app.title} - ReDoc")
