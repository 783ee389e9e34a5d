"""The one place exceptions become HTTP answers, all in API.md's error body."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from rewardhub.errors import Overloaded, RewardhubError

__all__ = [
    "DOCS_PATHS",
    "error_response",
    "install_error_handlers",
    "rewardhub_error_response",
    "unexpected_error_response",
]

DOCS_PATHS = ("/openapi.json", "/docs", "/redoc")
"""Pages a browser opens (:mod:`rewardhub.api.routes.docs`): a 401 on them asks for Basic credentials."""

log = logging.getLogger(__name__)


def error_response(
    status_code: int, error_type: str, message: str, detail: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"type": error_type, "message": message, "detail": detail}}
    return JSONResponse(body, status_code=status_code, headers=headers)


def rewardhub_error_response(request: Request, exc: RewardhubError) -> JSONResponse:
    """A RewardhubError as its HTTP answer (also used by :mod:`rewardhub.api.middleware.hot_routes`)."""
    headers = {"Retry-After": str(max(1, round(exc.retry_after)))} if isinstance(exc, Overloaded) else None
    if exc.status_code == 401:  # a browser asks for the key (as the password) on the operator page and the docs
        path = request.url.path
        ui = path == "/ui" or path.startswith("/ui/") or path in DOCS_PATHS
        headers = {"WWW-Authenticate": 'Basic realm="rewardhub", charset="UTF-8"' if ui else "Bearer"}
    if exc.status_code >= 500:
        log.error("request failed: %s", exc.message)
    return error_response(exc.status_code, exc.error_type, exc.message, _jsonable(exc.detail), headers)


def unexpected_error_response(request: Request, exc: Exception) -> JSONResponse:
    """Any other exception: logged with its traceback, answered 500 without internals."""
    log.exception("unhandled error on %s", request.url.path)
    return error_response(500, "internal_error", f"{type(exc).__name__}: the service failed on this request")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RewardhubError)
    async def _rewardhub_error(request: Request, exc: RewardhubError) -> JSONResponse:
        return rewardhub_error_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", "request does not match the schema", _jsonable(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "not_found", 405: "method_not_allowed"}
        return error_response(exc.status_code, kinds.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return unexpected_error_response(request, exc)


def _jsonable(value: Any) -> Any:
    """Validation errors can carry arbitrary objects (bytes, exceptions); keep the body JSON."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value if not isinstance(value, str) else value[:500]
    return repr(value)[:500]
