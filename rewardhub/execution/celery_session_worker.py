"""``rewardhub worker --queues sessions``: a Celery worker that holds sessions, each for its whole life.

A session is a sandbox kept alive by one process, so with ``execution: celery`` every session is
pinned to one worker of this kind, and every operation on it (a call, a GET, a DELETE, a sample
judged in it) is sent to that worker's own queue (:func:`~rewardhub.execution.celery_app.session_queue`),
which no other worker consumes. The API side is :mod:`~rewardhub.execution.celery_sessions`; where
each session lives is in :mod:`~rewardhub.execution.celery_session_records`.

Process layout: one process, Celery's thread pool. The sessions live in a
:class:`~rewardhub.sessions.host.SessionHost` of this process (the one ``rewardhub serve``
uses), and each operation runs in a thread of the pool against it, so a long call of one session
never waits behind another's, nor behind a scoring chunk (this worker takes none). Why one process:
sandboxes are started with ``--die-with-parent`` from one long-lived thread, so a worker killed with
SIGKILL takes every session's processes and scratch with it, exactly as ``rewardhub serve`` does;
there is no child process that could outlive it holding a sandbox.

A sample judged in a session (``session_tests``, the ``code`` verifier with ``session_id``) is scored
here, in this process: its verifier reaches the sessions through this host's socket, with a grant
this host writes in place of the API's (the API names the caller; the broker is the service's own).
The verifier's work is an operation on the session, bounded by the session's own call limits.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from typing import Any

from celery import signals

from ..calls import Call, run_call
from ..errors import InvalidRequest, RewardhubError
from ..logging import configure_logging
from ..registry import Registry
from ..sessions.host import SessionHost
from ..sessions.wire import error_of
from ..settings import Settings, use
from ..types import Sample
from ..verifier import CALLER_FIELD
from .celery_app import CONNECTION_ERRORS, create_celery_app, session_queue
from .celery_liveness import Heartbeat, liveness_for
from .celery_session_records import SessionRecords
from .celery_tasks import CallPayload, SessionOpPayload, register_session_task

__all__ = ["OPERATIONS", "SessionWorker", "run_session_worker"]

log = logging.getLogger(__name__)

OPERATIONS = (
    "create",
    "get",
    "find",
    "list",
    "run",
    "run_tests",
    "run_tests_fresh",
    "delete",
    "describe",
    "stats",
    "score",
)
"""What the API may ask of a session worker (the host's ``judge`` operations are its verifiers', by socket)."""
THREADS = 64
"""Operations at once (the default): each session runs one call at a time, so about the sessions in use."""


class SessionWorker:
    """The sessions of this worker, and the answers to the operations sent to it."""

    def __init__(self, settings: Settings, registry: Registry) -> None:
        self.registry = registry
        self.host = SessionHost(settings.sessions, settings.sandbox)

    def answer(self, op: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``{"answer": ...}``, or ``{"error": {type, message, retry_after}}`` (what :func:`raised` reads)."""
        try:
            if op not in OPERATIONS:
                raise InvalidRequest(f"unknown session operation {op!r}")
            value = self._score(body) if op == "score" else self.host.handle(op, dict(body))
        except RewardhubError as exc:
            return {"error": error_of(exc)}
        except (KeyError, TypeError, ValueError) as exc:  # a body of another version of the API
            return {"error": {"type": "invalid_request", "message": f"{type(exc).__name__}: {exc}"}}
        return {"answer": value}

    def _score(self, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One call whose samples are judged in sessions of this worker, scored here."""
        payload = CallPayload.model_validate(body["call"])
        config = self.registry.validate_config(payload.verifier, payload.config)
        samples = tuple(self._granted(sample) for sample in payload.samples)
        call = Call(payload.verifier, config, samples, payload.kind, payload.timeout_s)
        return [result.model_dump(mode="json") for result in run_call(self.registry, call)]

    def _granted(self, sample: Sample) -> Sample:
        """The sample with this host's grant for the caller the API named in it."""
        given = sample.metadata.get(CALLER_FIELD)
        if not isinstance(given, dict) or not isinstance(given.get("owner"), str):
            return sample
        metadata = {**sample.metadata, CALLER_FIELD: self.host.grant(given["owner"])}
        return sample.model_copy(update={"metadata": metadata})

    def close(self) -> None:
        self.host.close()


def run_session_worker(settings: Settings, concurrency: int | None = None) -> int:
    """Run a session worker until it is told to stop; returns its exit code."""
    configure_logging(settings.log_level, settings.log_format)
    use(settings)  # the judges it scores run in this process
    app = create_celery_app(settings)
    options = app.rewardhub_broker  # type: ignore[attr-defined]
    node = f"rewardhub-sessions-{os.getpid()}@{socket.gethostname()}"
    queue = session_queue(options, node)
    app.conf.task_queues = [queue]
    app.conf.task_soft_time_limit = app.conf.task_time_limit = None  # a call's limits are the session's
    liveness = liveness_for(app)
    records = SessionRecords(liveness, options.queue_prefix)
    sessions = SessionWorker(settings, Registry.load(settings.plugins))

    def handle(request: SessionOpPayload) -> None:
        records.reply(request.reply, sessions.answer(request.op, request.body))

    register_session_task(app, handle)
    signals.setup_logging.connect(_keep_our_logging, weak=False)
    signals.worker_ready.connect(lambda **_: records.join(node), weak=False)  # placed on once it consumes
    worker = app.Worker(
        hostname=node,
        queues=[queue.name],
        concurrency=concurrency or THREADS,
        pool="threads",
        loglevel=settings.log_level.upper(),
        without_mingle=True,
        without_gossip=True,
        quiet=True,
    )
    log.info(
        "session worker %s: queue %s, %d threads, broker %s",
        node,
        queue.name,
        concurrency or THREADS,
        options.transport,
    )
    heartbeat = Heartbeat(liveness, "worker", node, settings.heartbeat_s, CONNECTION_ERRORS)
    heartbeat.start()
    try:
        worker.start()
    finally:
        try:
            records.leave(node)
        except CONNECTION_ERRORS as exc:  # the API drops it once its liveness key is gone
            log.warning("could not remove session worker %s from the hosts: %s", node, exc)
        heartbeat.stop(forget=True)
        sessions.close()
    return int(worker.exitcode or 0)


def _keep_our_logging(**_: Any) -> None:
    """Connected to Celery's ``setup_logging``: our JSON logging stays in place."""
