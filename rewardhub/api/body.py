"""Reading request bodies defensively: size-capped while streaming, JSON parsed in Rust.

FastAPI's automatic body parsing reads the whole body before any limit applies, and reports
malformed JSON and wrong types alike as 422. We read the stream ourselves (413 past the limit,
without buffering more), then let pydantic's JSON parser tell syntax (400: bad JSON, bad UTF-8,
too deep) from shape (422). :func:`relative_files` is the rule of every body that carries files
to write into a sandbox.
"""

from __future__ import annotations

import posixpath
from typing import TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from rewardhub.errors import BadRequest, InvalidRequest, PayloadTooLarge

__all__ = ["parse_body", "read_body", "relative_files"]

Model = TypeVar("Model", bound=BaseModel)

_SYNTAX_ERRORS = {"json_invalid", "json_type"}


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_body(raw: bytes, model: type[Model]) -> Model:
    if not raw.strip():
        raise BadRequest("empty request body; expected JSON")
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        if any(error["type"] in _SYNTAX_ERRORS for error in errors) and len(errors) == 1 and not errors[0]["loc"]:
            raise BadRequest(f"malformed JSON: {errors[0]['msg']}") from None
        raise InvalidRequest("request body does not match the schema", detail=errors[:20]) from None


def relative_files(files: dict[str, str], most: int) -> dict[str, str]:
    """``files`` when there are at most ``most`` and each path is a plain relative one (the rule of
    every route that writes a caller's files into a sandbox: ``/v1/sandbox/run`` and the sessions')."""
    if len(files) > most:
        raise ValueError(f"at most {most} files")
    for path in files:
        normal = posixpath.normpath(path)
        if not path or path.startswith("/") or normal != path or normal.startswith("..") or "\0" in path:
            raise ValueError(f"file paths must be plain relative paths: {path!r}")
    return files
