"""``POST /v1/score`` for samples that name a session: the session's final state is what is judged.

A sample whose verifier is ``session_tests`` (by name, or ``{"name": "session_tests", "config":
{"command": ..., "files": {...}?, "timeout_s": ...?}}``, its own or the request's) and whose
``metadata.session`` is a session id of the caller's key is judged by running ``command`` on that
session's files in a fresh program of its sandbox (``/v1/sessions/{id}/test``): score 1.0 when it
exits 0, else 0.0, with the verdict in ``details``. A sample that cannot be judged (no session
named, the session expired or lost, no command, the sandbox failed) is ``status: "error"`` with a
message naming the field, never a 0. The other samples of the request go through the score pipeline
as before; the answer keeps the samples' order.

Judged here, in the API process that holds the sessions, not by a verifier in a worker process
(which cannot reach them); so ``session_tests`` is not one of ``GET /v1/verifiers``, it cannot sit
inside a ``sum`` or a ``gate``, and ``/v1/jobs`` does not take it.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import Request

from rewardhub.api.schemas import ScoreRequest
from rewardhub.errors import RewardhubError
from rewardhub.types import Result, Sample, VerifierRef, VerifierSpec

__all__ = ["SESSION_VERIFIER", "score_with_sessions"]

SESSION_VERIFIER = "session_tests"


def _session_config(spec: VerifierSpec | None) -> dict[str, Any] | None:
    """The config of a ``session_tests`` spec; None for any other verifier."""
    if spec == SESSION_VERIFIER:
        return {}
    if isinstance(spec, VerifierRef) and spec.name == SESSION_VERIFIER:
        return dict(spec.config)
    return None


async def score_with_sessions(request: Request, pipeline: Any, body: ScoreRequest) -> list[Result]:
    """The request's results: session samples judged in their sessions, the rest by ``pipeline``."""
    configs = [
        _session_config(sample.verifier if sample.verifier is not None else body.verifier) for sample in body.samples
    ]
    if all(config is None for config in configs):
        return await pipeline.score(body.samples, body.verifier, body.run, body.cache)
    others = [i for i, config in enumerate(configs) if config is None]
    results: list[Result | None] = [None] * len(body.samples)
    if others:
        scored = await pipeline.score([body.samples[i] for i in others], body.verifier, body.run, body.cache)
        for i, result in zip(others, scored, strict=True):
            results[i] = result
    for i, config in enumerate(configs):
        if config is not None:
            results[i] = await _judge(request, body.samples[i], config)
    return [result for result in results if result is not None]


async def _judge(request: Request, sample: Sample, config: dict[str, Any]) -> Result:
    from rewardhub.api.session_routes import _off_loop, _owner, manager_of

    started = time.perf_counter()
    session = sample.metadata.get("session")
    command = config.get("command")
    if not isinstance(session, str) or not session:
        return _failed(sample, "the sample names no session: metadata.session must be a session id")
    if not isinstance(command, str) or not command:
        return _failed(sample, "session_tests needs config.command, the test command to run")
    files = config.get("files") or {}
    timeout_s = float(config.get("timeout_s", 60.0))
    manager = manager_of(request)
    try:
        result = await _off_loop(manager.run_tests, session, _owner(request), command, timeout_s, files)
    except RewardhubError as exc:  # lost, expired, busy: this sample cannot be judged, the others can
        return _failed(sample, f"session_tests: {exc.message}")
    elapsed_ms = (time.perf_counter() - started) * 1000
    details = {"verdict": result.verdict, "exit_code": result.exit_code, "stderr": result.stderr[-2000:]}
    if result.verdict == "sandbox_error":
        message = result.details.get("message") or "the sandbox failed"
        return Result(id=sample.id, score=0.0, status="error", error=f"session_tests: {message}", details=details)
    return Result(id=sample.id, score=float(result.ok), details=details, elapsed_ms=elapsed_ms)


def _failed(sample: Sample, message: str) -> Result:
    return Result(id=sample.id, score=0.0, status="error", error=message)
