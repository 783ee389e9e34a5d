"""Sessions with ``execution: celery``: each pinned to one session worker, reached through its queue.

:class:`CelerySessions` is a :class:`~rewardhub.sessions.protocol.Sessions`, as the local manager is,
so the session routes, the ORS surface and the score pipeline do not know which one they have. A
creation goes to the next live session worker (``rewardhub worker --queues sessions``,
:mod:`~rewardhub.execution.celery_session_worker`), and the session's place is written where every
API process reads it (:mod:`~rewardhub.execution.celery_session_records`); every later operation on
it, and every sample judged in it (:meth:`CelerySessions.score`), is sent to that worker's own queue.

A lost worker is noticed the way a lost scoring worker is, by its liveness key, not by the broker:
before an operation is sent, and every :data:`POLL_S` while its answer is awaited. A session whose
worker is gone answers 410 ``session_lost`` naming the worker, within ``lost_after_s``; the
sessions of the other workers keep working. Operations are sent at most once (acknowledged on
receipt), never retried: a call on a session is not idempotent.

Each answer comes back on a Redis list of its own, popped with a blocking pop (no polling delay on a
session's call). An operation's message expires after its wait, so one left in a dead worker's queue
is never run by anyone.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from celery import Celery

from ..calls import Call, failure
from ..errors import ExecutionError, RewardhubError
from ..logging import current_request_id
from ..sandbox.errors import SandboxError, SandboxUnavailable
from ..sandbox.verdicts import RunResult
from ..sessions.errors import SessionLost, SessionNotFound
from ..sessions.fresh import ARTIFACT_FILE_BYTES, ARTIFACT_TOTAL_BYTES
from ..sessions.protocol import Sessions
from ..sessions.wire import raised, result_of
from ..types import Result, Sample
from ..verifier import CALLER_FIELD
from .celery_app import CONNECTION_ERRORS, TASK_SESSION_OP, session_queue
from .celery_liveness import Liveness
from .celery_session_records import Place, SessionRecords, reply_key
from .celery_tasks import CallPayload, SessionOpPayload

__all__ = ["CELERY_GRANT", "CelerySessions"]

log = logging.getLogger(__name__)

CELERY_GRANT = "celery"
"""A grant's ``sessions`` field with this engine: the sample names its caller, and the session worker
that scores it writes a grant of its own host (:meth:`SessionWorker._granted`)."""
POLL_S = 0.5
"""How often a wait for an answer checks that the worker is still alive."""
SHORT_WAIT_S = 30.0
"""The longest a live worker may take over a quick operation (GET, DELETE, a listing)."""
LISTING_WAIT_S = 10.0
"""The longest a live worker may take over its part of a listing, the operator page's or /metrics'."""
CREATE_WAIT_S = 120.0
CALL_GRACE_S = 30.0
"""Added to a call's own limit: the worker ends the call at that limit and answers."""
FRESH_START_S = 60.0
"""What a fresh verification may add to its tests' time: copying the artifacts out, a new sandbox's start."""
DEFAULT_CALL_WAIT_S = 330.0
"""A call that gives no limit has the session's default, at most the host's largest (300 s)."""


class CelerySessions(Sessions):
    """The session operations, each answered by the session worker that holds the session.

    It lives with the Celery engine, not in :mod:`rewardhub.sessions`: it is made of the engine's
    parts (its app and queues, worker liveness, the task payloads) and needs the ``celery`` extra."""

    def __init__(self, app: Celery, liveness: Liveness, lost_after_s: float) -> None:
        self.app = app
        self.options = app.rewardhub_broker  # type: ignore[attr-defined]
        self.records = SessionRecords(liveness, self.options.queue_prefix)
        self.lost_after_s = lost_after_s
        self.threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="celery-session")
        """Where the score pipeline's samples judged in sessions wait for their worker."""
        self._fan_out = ThreadPoolExecutor(max_workers=8, thread_name_prefix="celery-session-list")
        """Where a listing asks the workers at once (never behind samples waiting in :attr:`threads`)."""
        self._publish = threading.Lock()  # one publish at a time through the app's producer pool

    # --- the routes' operations -----------------------------------------------------------------
    def create(
        self,
        owner: str,
        runtime: str,
        files: Mapping[str, str],
        limits: Mapping[str, Any] | None,
        ttl_s: float | None,
        tags: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        hosts = self._call_redis(self.records.live_hosts)
        if not hosts:
            raise SandboxUnavailable(
                "no session worker is running: start one with `rewardhub worker --queues sessions`"
            )
        node = self._call_redis(self.records.next_host, hosts)
        body = {"owner": owner, "runtime": runtime, "files": dict(files), "limits": limits, "ttl_s": ttl_s}
        described = self._ask(node, "create", {**body, "tags": dict(tags or {})}, CREATE_WAIT_S)
        lifetime = float(described.get("lifetime_s") or 0.0)
        self._call_redis(self.records.place, described["session_id"], Place(node, owner), lifetime)
        return described

    def get(self, session_id: str, owner: str) -> dict[str, Any]:
        return self._ask_session(session_id, owner, "get", {}, SHORT_WAIT_S)

    def find(self, owner: str, tag: str, value: Any) -> dict[str, Any] | None:
        found = [s for s in self._ask_all("find", {"owner": owner, "tag": tag, "value": value}) if s is not None]
        return found[0] if found else None

    def list(self, owner: str) -> list[dict[str, Any]]:
        return [session for listed in self._ask_all("list", {"owner": owner}) for session in listed]

    def run(self, session_id: str, owner: str, request: dict[str, Any], timeout_s: float | None) -> RunResult:
        wait = DEFAULT_CALL_WAIT_S if timeout_s is None else timeout_s + CALL_GRACE_S
        body = {"request": request, "timeout_s": timeout_s}
        return result_of(self._ask_session(session_id, owner, "run", body, wait))

    def run_tests(
        self, session_id: str, owner: str, command: str, timeout_s: float, files: Mapping[str, str] | None = None
    ) -> RunResult:
        body = {"command": command, "timeout_s": timeout_s, "files": dict(files or {})}
        return result_of(self._ask_session(session_id, owner, "run_tests", body, timeout_s + CALL_GRACE_S))

    def run_tests_fresh(
        self,
        session_id: str,
        owner: str,
        command: str,
        timeout_s: float,
        files: Mapping[str, str] | None,
        artifacts: Sequence[str],
        max_file_bytes: int = ARTIFACT_FILE_BYTES,
        max_total_bytes: int = ARTIFACT_TOTAL_BYTES,
    ) -> RunResult:
        body = {
            "command": command,
            "timeout_s": timeout_s,
            "files": dict(files or {}),
            "artifacts": list(artifacts),
            "max_file_bytes": max_file_bytes,
            "max_total_bytes": max_total_bytes,
        }
        # a fresh sandbox starts on top of the tests' own time
        wait = timeout_s + CALL_GRACE_S + FRESH_START_S
        return result_of(self._ask_session(session_id, owner, "run_tests_fresh", body, wait))

    def delete(self, session_id: str, owner: str) -> None:
        self._ask_session(session_id, owner, "delete", {}, SHORT_WAIT_S)

    def describe(self) -> dict[str, Any]:
        """Live sessions by key across the live session workers, for the operator page."""
        merged: dict[str, Any] = {"live": 0, "created": 0, "by_key": {}}
        for part in self._ask_all("describe", {}):
            merged["live"] += part["live"]
            merged["created"] += part["created"]
            for key, sessions in part["by_key"].items():
                merged["by_key"].setdefault(key, []).extend(sessions)
        return merged

    def stats(self) -> dict[str, Any] | None:
        """The counts of the live session workers, summed (``/metrics``); None while none opened a session."""
        parts = [part for part in self._ask_all("stats", {}) if part is not None]
        return _summed(parts) if parts else None

    def grant(self, owner: str) -> dict[str, Any]:
        """What a sample judged in a session carries: its caller, for the worker that scores it."""
        return {"owner": owner, "sessions": CELERY_GRANT}

    def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)
        self._fan_out.shutdown(wait=False, cancel_futures=True)

    # --- the score pipeline's samples -----------------------------------------------------------
    @staticmethod
    def session_named(sample: Sample) -> str | None:
        """The session a sample is judged in (the ``code`` verifier's ``session_id``, ``session_tests``'s
        ``metadata.session``), when the pipeline marked it for this engine; else None."""
        given = sample.metadata.get(CALLER_FIELD)
        if not isinstance(given, dict) or given.get("sessions") != CELERY_GRANT:
            return None
        named = sample.session_id or sample.metadata.get("session")
        return named if isinstance(named, str) and named else None

    def score(self, call: Call) -> list[Result]:
        """The call's results, scored by the worker of its samples' sessions (each sample on its own,
        unless the verifier judges a group); a session that cannot be reached is each sample's error."""
        if len(call.samples) > 1 and call.kind != "group":
            return [r for sample in call.samples for r in self.score(dataclasses.replace(call, samples=(sample,)))]
        session_id = next(filter(None, map(self.session_named, call.samples)), None)
        if session_id is None:  # a batch-mate of samples judged in sessions, judged in none itself
            return failure(call, "the sample names no session to be judged in (session_id, or metadata.session)")
        owner = str(call.samples[0].metadata[CALLER_FIELD].get("owner", ""))
        body = {"call": CallPayload.from_call(call).model_dump(mode="json")}
        try:
            answers = self._ask_session(session_id, owner, "score", body, call.timeout_s + CALL_GRACE_S, owned=False)
        except RewardhubError as exc:
            message = f"session {session_id!r} cannot be judged: {exc.error_type} ({exc.status_code}): {exc.message}"
            return failure(call, message, session_id=session_id, error_type=exc.error_type)
        return [Result.model_validate(answer) for answer in answers]

    # --- asking a worker ------------------------------------------------------------------------
    def _ask_session(
        self, session_id: str, owner: str, op: str, body: dict[str, Any], wait_s: float, owned: bool = True
    ) -> Any:
        """``op`` on the worker that holds the session. ``owned``: the worker checks the owner in the
        body too (a score's samples carry it instead)."""
        place = self._call_redis(self.records.where, session_id)
        if place is None or place.owner != owner:  # another key's reads as unknown, as on one host
            raise SessionNotFound(f"no session {session_id!r}")
        if not self._call_redis(self.records.alive, place.node):
            raise SessionLost(self._lost(session_id, place.node))
        ids = {"id": session_id, "owner": owner} if owned else {}
        return self._ask(place.node, op, {**ids, **body}, wait_s, session_id)

    def _ask(self, node: str, op: str, body: dict[str, Any], wait_s: float, session_id: str | None = None) -> Any:
        key = reply_key(uuid.uuid4().hex)
        payload = SessionOpPayload(request_id=current_request_id(), op=op, body=body, reply=key)
        try:
            with self._publish:
                self.app.send_task(
                    TASK_SESSION_OP,
                    args=[payload.model_dump(mode="json")],
                    queue=session_queue(self.options, node),
                    expires=wait_s,
                )
        except CONNECTION_ERRORS as exc:
            raise ExecutionError(f"the broker cannot be reached to ask session worker {node}: {exc}") from None
        deadline = time.monotonic() + wait_s
        while True:
            answer = self._call_redis(self.records.wait_reply, key, POLL_S)
            if answer is not None:
                break
            if not self._call_redis(self.records.alive, node):
                raise SessionLost(self._lost(session_id, node) if session_id else f"session worker {node} was lost")
            if time.monotonic() > deadline:
                raise SandboxError(f"session worker {node} did not answer {op!r} within {wait_s:g} s")
        if "error" in answer:
            raise raised(answer["error"], f"session worker {node} failed {op!r}")
        return answer["answer"]

    def _ask_all(self, op: str, body: dict[str, Any]) -> list[Any]:
        """``op`` on every live session worker at once; a worker that is lost meanwhile, or fails,
        is left out (a listing is of what can be reached), and logged."""
        hosts = self._call_redis(self.records.live_hosts)
        futures = {node: self._fan_out.submit(self._ask, node, op, body, LISTING_WAIT_S) for node in hosts}
        answers = []
        for node, future in futures.items():
            try:
                answers.append(future.result())
            except (SessionLost, SandboxError, ExecutionError) as exc:
                log.warning("session worker %s left out of %r: %s", node, op, exc)
        return answers

    def _lost(self, session_id: str, node: str) -> str:
        return (
            f"session {session_id!r} was lost: the worker that held it ({node}) is gone (no heartbeat for "
            f"{self.lost_after_s:g} s); sessions end with their worker"
        )

    @staticmethod
    def _call_redis(read: Any, *args: Any) -> Any:
        try:
            return read(*args)
        except CONNECTION_ERRORS as exc:
            raise ExecutionError(f"the sessions' records in Redis cannot be reached: {exc}") from None


def _summed(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several hosts' :meth:`SessionStats.as_dict` as one (counts add up; so do histogram buckets)."""
    total = {key: sum(part[key] for part in parts) for key in ("live", "created", "calls")}
    for key in ("ended", "rejected"):
        total[key] = {name: sum(part[key].get(name, 0) for part in parts) for name in parts[0][key]}
    bounds = [bound for bound, _ in parts[0]["call_seconds"]["buckets"]]
    counts = [sum(part["call_seconds"]["buckets"][i][1] for part in parts) for i in range(len(bounds))]
    total["call_seconds"] = {
        "sum": sum(part["call_seconds"]["sum"] for part in parts),
        "buckets": list(zip(bounds, counts, strict=True)),
    }
    return total
