"""Who is alive and who holds which chunk: what lets the API re-dispatch a lost worker's chunks in seconds.

A broker gives a chunk held by a dead worker back only after its visibility timeout (an hour on
Redis) or, on RabbitMQ, once the dead connection is noticed; a worker that is stopped but not
dead keeps its chunks on either broker. So the API does not wait for the broker. It reads these
records, all in the Redis that holds the results (so they work the same with either broker):

- ``rewardhub:alive:worker:<node>`` and ``rewardhub:alive:api:<instance>``: a liveness key that each
  worker's main process and each API process refresh every ``heartbeat_s`` and that expires after
  ``lost_after_s``. The expiry runs on Redis's clock, so hosts need not agree on the time; a process
  that is killed, stopped (SIGSTOP), partitioned or starved of CPU that long is presumed gone.
- ``rewardhub:task:<task id>:worker``: the node that received a delivery of a chunk (written by the
  worker's main process when the message arrives, before a pool process starts it).
- ``rewardhub:chunk:<chunk id>:attempt``: the task id of a chunk's latest dispatch. An older
  delivery skips the chunk, or drops what it scored if the new dispatch happened while it ran:
  it was presumed lost for a reason (stopped, cut off), and its wall-clock limits, the sandbox's
  included, may have fired for that reason alone.
- ``rewardhub:chunk:<chunk id>:settled``: written once the API has taken a chunk's result; any
  later delivery of that chunk is skipped by the worker that gets it.

A Redis restart empties all of this (and the queues, on a Redis broker); the API notices it by
the server's ``run_id`` changing (:meth:`Liveness.server_id`) and dispatches again everything it
was waiting for.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["SKIP_ORIGIN_GONE", "SKIP_SETTLED", "SKIP_SUPERSEDED", "Heartbeat", "Liveness", "liveness_for"]

log = logging.getLogger(__name__)

PREFIX = "rewardhub:"
SKIP_SETTLED = "settled"  # the API already took a result for this chunk
SKIP_ORIGIN_GONE = "origin_gone"  # the API process that sent the chunk is gone: nobody waits for it
SKIP_SUPERSEDED = "superseded"  # the chunk was dispatched again while this delivery ran


def _alive_key(role: str, name: str) -> str:
    return f"{PREFIX}alive:{role}:{name}"


def _owner_key(task_id: str) -> str:
    return f"{PREFIX}task:{task_id}:worker"


def _attempt_key(chunk_id: str) -> str:
    return f"{PREFIX}chunk:{chunk_id}:attempt"


def _settled_key(chunk_id: str) -> str:
    return f"{PREFIX}chunk:{chunk_id}:settled"


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class Liveness:
    """The records above, read and written through one Redis client (any thread may share it)."""

    def __init__(self, client: Any, lost_after_s: float, ttl_s: float) -> None:
        self.client = client
        self.lost_after_ms = max(1, int(lost_after_s * 1000))
        self.ttl_s = max(1, int(ttl_s))

    # --- liveness ---------------------------------------------------------------------------
    def beat(self, role: str, name: str) -> None:
        self.client.set(_alive_key(role, name), "1", px=self.lost_after_ms)

    def forget(self, role: str, name: str) -> None:
        self.client.delete(_alive_key(role, name))

    def alive(self, role: str, names: Iterable[str]) -> set[str]:
        ordered = sorted(set(names))
        if not ordered:
            return set()
        values = self.client.mget([_alive_key(role, name) for name in ordered])
        return {name for name, value in zip(ordered, values, strict=True) if value is not None}

    # --- who holds what ---------------------------------------------------------------------
    def claim(self, task_id: str, worker: str) -> None:
        self.client.set(_owner_key(task_id), worker, ex=self.ttl_s)

    def owners(self, task_ids: Sequence[str]) -> dict[str, str | None]:
        if not task_ids:
            return {}
        values = self.client.mget([_owner_key(task_id) for task_id in task_ids])
        return {task_id: _text(value) for task_id, value in zip(task_ids, values, strict=True)}

    def dispatched(self, chunk_id: str, task_id: str) -> None:
        """Record ``task_id`` as the chunk's latest dispatch (before it is published)."""
        self.client.set(_attempt_key(chunk_id), task_id, ex=self.ttl_s)

    def settle(self, chunk_ids: Sequence[str]) -> None:
        if not chunk_ids:
            return
        pipe = self.client.pipeline(transaction=False)
        for chunk_id in chunk_ids:
            pipe.set(_settled_key(chunk_id), "1", ex=self.ttl_s)
        pipe.execute()

    def skip_reason(self, chunk_id: str, task_id: str, origin: str | None) -> str | None:
        """Why a delivery that is about to start need not run, or None when it should."""
        keys = [_settled_key(chunk_id), _attempt_key(chunk_id)] + ([_alive_key("api", origin)] if origin else [])
        values = self.client.mget(keys)
        if values[0] is not None:
            return SKIP_SETTLED
        if values[1] is not None and _text(values[1]) != task_id:
            return SKIP_SUPERSEDED  # a newer dispatch of the chunk is out: it will answer
        if origin and values[2] is None:
            return SKIP_ORIGIN_GONE
        return None

    def superseded(self, chunk_id: str, task_id: str) -> bool:
        """True when the chunk was dispatched again after ``task_id`` (an unknown record is not)."""
        latest = _text(self.client.get(_attempt_key(chunk_id)))
        return latest is not None and latest != task_id

    def server_id(self) -> str:
        """Changes when the Redis server restarts (and forgets everything above)."""
        return str(self.client.info("server")["run_id"])


class Heartbeat:
    """Refreshes one liveness key from a daemon thread until stopped.

    A thread rather than a timer in the worker's event loop: the main loop may block on the
    broker for seconds (reconnecting), and a worker that is only busy must not look dead. The
    first beat happens in :meth:`start`, so a new process is alive before it takes work.
    """

    def __init__(self, liveness: Liveness, role: str, name: str, every_s: float, errors: tuple[type, ...]) -> None:
        self.liveness = liveness
        self.role, self.name = role, name
        self.every_s = every_s
        self.errors = errors
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"rewardhub-heartbeat-{role}", daemon=True)

    def start(self) -> None:
        self._beat()
        self._thread.start()

    def stop(self, forget: bool = False) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if forget:
            try:
                self.liveness.forget(self.role, self.name)
            except self.errors as exc:
                log.warning("could not remove the liveness key of %s %s: %s", self.role, self.name, exc)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._beat()

    def _beat(self) -> None:
        try:
            self.liveness.beat(self.role, self.name)
        except self.errors as exc:  # Redis away (restarting): beat again next time
            log.warning("heartbeat of %s %s failed: %s", self.role, self.name, exc)


def liveness_for(app: Any) -> Liveness:
    """The records of a Celery app built by :func:`~rewardhub.execution.celery_app.create_celery_app`,
    kept at least as long as a result and twice the broker's visibility timeout (a message of a
    dead worker comes back after that and must still find its chunk settled)."""
    settings = app.rewardhub_settings
    ttl = max(settings.result_ttl_s, 2 * app.rewardhub_broker.visibility_timeout_s)
    return Liveness(app.backend.client, settings.lost_after_s, ttl)
