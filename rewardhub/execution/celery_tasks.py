"""The Celery task and its payloads: what travels between the API process and a worker.

A task is a thin adapter (like a web view): validate the payload, make the request id current,
hand the chunk to the worker's runtime (which calls :func:`~rewardhub.calls.run_call`
in a killable process, or the verifier's batch method for model verifiers), dump the outcome.
Payloads are pydantic models with ``extra="forbid"`` so a worker of another version fails loudly
instead of guessing; on the wire they are plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from celery import Celery
from pydantic import BaseModel, ConfigDict, Field

from rewardhub.calls import Call
from rewardhub.execution.celery_app import TASK_SCORE_CHUNK, TASK_SESSION_OP
from rewardhub.logging import request_context
from rewardhub.types import Result, Sample, VerifierKind

__all__ = [
    "CallPayload",
    "ChunkOutcome",
    "ChunkPayload",
    "ChunkScorer",
    "SessionOpPayload",
    "register_session_task",
    "register_tasks",
]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CallPayload(_Payload):
    """One :class:`~rewardhub.calls.Call`, with its config as plain data (the worker
    validates it again against its own registry)."""

    verifier: str
    config: dict[str, Any] = Field(default_factory=dict)
    samples: list[Sample] = Field(min_length=1)
    kind: VerifierKind
    timeout_s: float = Field(gt=0)

    @classmethod
    def from_call(cls, call: Call) -> CallPayload:
        return cls(
            verifier=call.verifier,
            config=call.config.model_dump(mode="json"),
            samples=list(call.samples),
            kind=call.kind,
            timeout_s=call.timeout_s,
        )


class ChunkPayload(_Payload):
    """Up to ``chunk_size`` calls of one queue, scored by one worker process in order.

    ``chunk_id`` names the chunk across its dispatches (each dispatch is a new task id), so the
    poison ledger counts deliveries per chunk and a late delivery can learn the chunk is settled;
    ``origin`` is the API process waiting for it (a delivery whose origin is gone is skipped)."""

    request_id: str | None = None
    chunk_id: str | None = None
    origin: str | None = None
    calls: list[CallPayload] = Field(min_length=1)


class ChunkOutcome(_Payload):
    """One result list per call, in the payload's order, and where and how it was scored.

    A delivery that did not score (``skipped`` says why: see :mod:`celery_liveness`) carries no
    results; the API never takes it as the chunk's answer."""

    results: list[list[Result]]
    worker: str
    delivery: int = Field(1, ge=0, description="Which delivery of the chunk this is (above 1: redelivered).")
    skipped: str | None = None


class ChunkScorer(Protocol):
    """What the task hands a chunk to: the worker process's runtime."""

    def score_chunk(self, chunk: ChunkPayload, task_id: str, hostname: str) -> ChunkOutcome: ...


def register_tasks(app: Celery, scorer: Callable[[Celery], ChunkScorer]) -> None:
    """Register ``rewardhub.score_chunk`` on ``app``; ``scorer(app)`` gives the runtime that scores.

    The runtime is passed in rather than imported: the worker module builds on this one, never
    the other way round."""

    @app.task(name=TASK_SCORE_CHUNK, bind=True, acks_late=True, reject_on_worker_lost=True)
    def score_chunk(task: Any, payload: dict[str, Any]) -> dict[str, Any]:
        chunk = ChunkPayload.model_validate(payload)
        with request_context(chunk.request_id):
            outcome = scorer(app).score_chunk(chunk, task.request.id, task.request.hostname or "")
        return outcome.model_dump(mode="json")


class SessionOpPayload(_Payload):
    """One operation on the sessions of the worker it is sent to (``op``: create, run, get, ... or
    score, with its JSON ``body``), and the Redis list its answer is pushed to (``reply``)."""

    request_id: str | None = None
    op: str = Field(min_length=1)
    body: dict[str, Any] = Field(default_factory=dict)
    reply: str = Field(min_length=1)


def register_session_task(app: Celery, handle: Callable[[SessionOpPayload], None]) -> None:
    """Register ``rewardhub.session_op`` on a session worker's app; ``handle`` answers it.

    Acknowledged on receipt, not after: an operation on a session is never run twice (a /run
    delivered again would run its code again), and a lost worker is the API's to notice
    (:mod:`~rewardhub.execution.celery_sessions`), not the broker's."""

    @app.task(name=TASK_SESSION_OP, acks_late=False, reject_on_worker_lost=False, ignore_result=True)
    def session_op(payload: dict[str, Any]) -> None:
        request = SessionOpPayload.model_validate(payload)
        with request_context(request.request_id):
            handle(request)
