"""The API side's one thread for the broker: publish chunks, collect results, re-dispatch lost chunks.

Every Celery client call of an API process happens on this thread, so the event loop never
blocks on the broker. Its loop:

- **publish** chunks handed to it (:meth:`Dispatcher.send`). Each dispatch of a chunk is a new
  task id; the chunk id stays. A publish that fails (the broker restarting) is retried every
  sweep; a chunk that never reached the broker in ``PUBLISH_PATIENCE_S`` fails its request (503).
- **poll** the result backend with one MGET for every delivery still open, sleeping a little
  longer after each empty poll (2 ms up to 50 ms). The first result of a chunk wins: the chunk is
  resolved, marked settled in Redis, and its other deliveries are forgotten, so a late duplicate
  is dropped. A delivery that skipped the chunk, one the worker revoked (Celery stops running
  tasks when it loses the broker, and may record that as ``REVOKED: terminated`` rather than a
  retry), or an older delivery that failed while a newer one is still open, is not an answer.
- **sweep**, every ``heartbeat_s``, with the records of :mod:`celery_liveness`:

  - a chunk whose every open delivery is held by a worker whose liveness key expired is
    dispatched again (the broker would return it only after its visibility timeout);
  - so is a chunk whose delivery left its queue but was never claimed for ``lost_after_s``: a
    worker killed between taking a message and recording its claim (on Redis, kombu pops the
    message before it files it as unacked, so the broker may never return it). Queues are FIFO:
    once a later delivery on the same queue was claimed or answered, an unclaimed earlier one
    has left the queue;
  - when the Redis server's ``run_id`` changes (restarted, its queues and records gone), every
    chunk still waited for is dispatched again;
  - a chunk dispatched more often than its poison bound allows, or with no answer long after its
    last dispatch, is given up on: its samples get ``error`` with the reason.

The worker side bounds poison samples the same way as before: its delivery ledger counts
deliveries per chunk, re-dispatches included, and scores a redelivered chunk call by call.
"""

from __future__ import annotations

import itertools
import logging
import math
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery import states

from rewardhub.errors import ExecutionError
from rewardhub.execution.celery_app import CONNECTION_ERRORS, TASK_SCORE_CHUNK, TimeLimits, queue_of_chunk
from rewardhub.execution.celery_liveness import SKIP_ORIGIN_GONE, Liveness

__all__ = ["Dispatch", "DispatchStats", "Dispatcher", "Lost", "Outcome"]

log = logging.getLogger(__name__)

MIN_POLL_S, MAX_POLL_S = 0.002, 0.05
MGET_BATCH = 1000
PUBLISH_PATIENCE_S = 15.0  # a chunk that cannot reach the broker this long fails its request
EXTRA_DISPATCHES = 3  # a chunk may be dispatched this many times more than it has calls


@dataclass(frozen=True)
class Lost:
    """A chunk whose result will never come: its samples get ``error`` with this message."""

    message: str


Outcome = dict[str, Any] | ExecutionError | Lost  # result meta; could not publish (503); or lost


@dataclass
class Dispatch:
    """A chunk handed to the dispatcher, and the callback that receives its outcome (once)."""

    chunk_id: str
    payload: dict[str, Any]
    limits: TimeLimits
    calls: int
    resolve: Callable[[Outcome], None]


@dataclass
class _Tracked:
    dispatch: Dispatch
    queue: str  # the logical queue its deliveries go to (cpu, code, gpu): FIFO within it
    open: dict[str, int] = field(default_factory=dict)  # deliveries that may still answer: task id -> publish order
    latest: str = ""  # task id of the latest dispatch
    dispatches: int = 0
    losses: int = 0  # dispatches again because every delivery was lost (the poison bound counts these)
    deadline: float = math.inf
    first_failure: float | None = None  # when publishing it started failing


@dataclass
class DispatchStats:
    """Counters for logs and tests: what recovery cost."""

    redispatched: int = 0
    duplicates_dropped: int = 0
    server_restarts: int = 0


class Dispatcher:
    def __init__(
        self, app: Any, liveness: Liveness, origin: str, sweep_every_s: float, extra_servers: list[Any]
    ) -> None:
        self.app = app
        self.liveness = liveness
        self.origin = origin  # this API process's liveness name, as its chunks' payloads carry it
        self.sweep_every_s = sweep_every_s
        self.servers = [liveness, *extra_servers]  # Redis servers whose restart loses chunks
        broker = app.rewardhub_broker
        self.patience_s = 2 * broker.visibility_timeout_s  # backstop: no answer this long after a dispatch
        self.stats = DispatchStats()
        self._outbox: queue.SimpleQueue[Dispatch | None] = queue.SimpleQueue()
        self._chunks: dict[str, _Tracked] = {}
        self._tasks: dict[str, str] = {}  # open task id -> chunk id
        self._unsent: dict[str, _Tracked] = {}
        self._broker_down_until = 0.0
        self._server_ids: list[str] | None = None
        self._published = itertools.count()
        self._newest_taken: dict[str, int] = {}  # queue -> publish order of its newest delivery taken
        self._unclaimed_since: dict[str, float] = {}  # task id -> when seen taken from its queue, unclaimed
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rewardhub-celery-dispatch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._outbox.put(None)
        self._thread.join(timeout=10)
        for tracked in list(self._chunks.values()):
            tracked.dispatch.resolve(Lost("service shutting down"))
        self._chunks.clear()
        self._tasks.clear()

    def send(self, item: Dispatch) -> None:
        self._outbox.put(item)

    # --- the loop ----------------------------------------------------------------------------
    def _loop(self) -> None:
        interval = MIN_POLL_S
        next_sweep = 0.0
        while not self._stopping.is_set():
            sent = self._send_waiting(interval if self._tasks else MAX_POLL_S * 10)
            found = self._poll() if self._tasks else 0
            if time.monotonic() >= next_sweep:
                self._sweep()
                next_sweep = time.monotonic() + self.sweep_every_s
            interval = MIN_POLL_S if sent or found else min(MAX_POLL_S, interval * 2)

    def _send_waiting(self, wait_s: float) -> int:
        try:
            item = self._outbox.get(timeout=wait_s)
        except queue.Empty:
            return 0
        sent = 0
        while item is not None:
            tracked = self._chunks[item.chunk_id] = _Tracked(item, queue_of_chunk(item.payload))
            self._publish(tracked)
            sent += 1
            try:
                item = self._outbox.get_nowait()
            except queue.Empty:
                break
        return sent

    # --- publishing --------------------------------------------------------------------------
    def _publish(self, tracked: _Tracked) -> None:
        chunk = tracked.dispatch
        now = time.monotonic()
        if now < self._broker_down_until:
            self._hold(tracked, now)
            return
        task_id = uuid.uuid4().hex
        try:
            self.liveness.dispatched(chunk.chunk_id, task_id)
            self.app.send_task(
                TASK_SCORE_CHUNK,
                args=[chunk.payload],
                task_id=task_id,
                soft_time_limit=chunk.limits.soft_s,
                time_limit=chunk.limits.hard_s,
            )
        except CONNECTION_ERRORS as exc:
            log.error("cannot publish chunk %s: %s", chunk.chunk_id, exc)
            self._broker_down_until = time.monotonic() + min(1.0, self.sweep_every_s)
            self._hold(tracked, now, exc)
            return
        tracked.open[task_id] = next(self._published)
        tracked.latest = task_id
        tracked.dispatches += 1
        tracked.first_failure = None
        tracked.deadline = time.monotonic() + self.patience_s + 2 * chunk.limits.hard_s
        self._tasks[task_id] = chunk.chunk_id
        self._unsent.pop(chunk.chunk_id, None)

    def _hold(self, tracked: _Tracked, now: float, exc: BaseException | None = None) -> None:
        """Keep a chunk that could not be published for the next sweep, or fail it if it never was."""
        tracked.first_failure = tracked.first_failure or now
        if tracked.dispatches == 0 and now - tracked.first_failure > PUBLISH_PATIENCE_S:
            reason = f": {exc}" if exc else ""
            self._give_up(tracked, ExecutionError(f"the broker is unreachable{reason}"))
            return
        self._unsent[tracked.dispatch.chunk_id] = tracked

    def _redispatch(self, tracked: _Tracked, why: str, loss: bool = True) -> None:
        """Dispatch a chunk again; a ``loss`` (its deliveries were lost, not merely skipped) counts
        toward the bound after which the chunk is given up on, like a poison sample."""
        if loss and tracked.losses + 1 >= tracked.dispatch.calls + EXTRA_DISPATCHES:
            self._give_up(
                tracked,
                Lost(
                    f"the chunk was dispatched {tracked.dispatches} times and every worker that took it was lost; "
                    "not dispatched again"
                ),
            )
            return
        log.warning("dispatching chunk %s again: %s", tracked.dispatch.chunk_id, why)
        tracked.losses += int(loss)
        self.stats.redispatched += 1
        self._publish(tracked)

    # --- results -----------------------------------------------------------------------------
    def _poll(self) -> int:
        backend = self.app.backend
        ids = list(self._tasks)
        found = 0
        settled: list[str] = []
        for start in range(0, len(ids), MGET_BATCH):
            batch = ids[start : start + MGET_BATCH]
            try:
                values = backend.mget([backend.get_key_for_task(task_id) for task_id in batch])
            except CONNECTION_ERRORS as exc:
                log.warning("result backend unreachable, retrying: %s", exc)
                self._stopping.wait(0.5)
                return found
            for task_id, raw in zip(batch, values, strict=True):
                if raw is None or task_id not in self._tasks:
                    continue
                meta = backend.decode_result(raw)
                if meta.get("status") in states.READY_STATES:
                    found += 1
                    answered = self._take(task_id, meta)
                    if answered is not None:
                        settled.append(answered)
        self._settle(settled)
        return found

    def _take(self, task_id: str, meta: dict[str, Any]) -> str | None:
        """Handle one finished delivery; the chunk's id when it answered its chunk."""
        chunk_id = self._tasks.pop(task_id)
        tracked = self._chunks.get(chunk_id)
        if tracked is None or task_id not in tracked.open:
            self.stats.duplicates_dropped += 1
            return None
        self._taken(tracked.queue, tracked.open.pop(task_id))
        status = meta.get("status")
        unscored = _skipped(meta) or (status if status == states.REVOKED else None)
        failed_early = status != states.SUCCESS and task_id != tracked.latest
        if unscored is not None or (failed_early and tracked.open):
            log.info("chunk %s: delivery %s is not an answer (%s)", chunk_id, task_id, unscored or status)
            if unscored == SKIP_ORIGIN_GONE:  # our key was missing (Redis restarted): restore it first
                self._beat()
                self._redispatch(tracked, "the worker found no liveness key of this API process", loss=False)
            elif not tracked.open:
                self._redispatch(tracked, f"its delivery was not scored ({unscored or status})")
            return None
        for other in tracked.open:  # a late answer of another delivery is dropped
            self._tasks.pop(other, None)
        self.stats.duplicates_dropped += len(tracked.open)
        del self._chunks[chunk_id]
        self._unsent.pop(chunk_id, None)
        tracked.dispatch.resolve(meta)
        return chunk_id

    def _settle(self, chunk_ids: list[str]) -> None:
        if not chunk_ids:
            return
        try:
            self.liveness.settle(chunk_ids)
        except CONNECTION_ERRORS as exc:  # a late delivery then runs in vain; nothing is lost
            log.warning("could not mark %d chunks settled: %s", len(chunk_ids), exc)

    # --- the sweep ---------------------------------------------------------------------------
    def _sweep(self) -> None:
        try:
            self._check_servers()
            self._redispatch_lost()
        except CONNECTION_ERRORS as exc:
            log.warning("cannot check the workers' liveness: %s", exc)
        for tracked in list(self._unsent.values()):
            if tracked.dispatch.chunk_id in self._chunks:
                self._publish(tracked)
        self._expire()

    def _check_servers(self) -> None:
        ids = [server.server_id() for server in self.servers]
        if self._server_ids is not None and ids != self._server_ids and self._chunks:
            self.stats.server_restarts += 1
            log.warning("Redis restarted (its run id changed): dispatching %d chunks again", len(self._chunks))
            self._beat()  # the restarted Redis forgot this process's liveness key too
            for tracked in list(self._chunks.values()):
                if tracked.dispatch.chunk_id not in self._unsent:
                    self._redispatch(tracked, "Redis restarted")
        self._server_ids = ids

    def _redispatch_lost(self) -> None:
        waiting = [t for t in self._chunks.values() if t.open and t.dispatch.chunk_id not in self._unsent]
        if not waiting:
            self._unclaimed_since.clear()
            return
        owners = self.liveness.owners([task_id for tracked in waiting for task_id in tracked.open])
        alive = self.liveness.alive("worker", {owner for owner in owners.values() if owner})
        for tracked in waiting:
            for task_id, order in tracked.open.items():
                if owners.get(task_id):
                    self._taken(tracked.queue, order)
        now = time.monotonic()
        lost_after_s = self.liveness.lost_after_ms / 1000
        unclaimed_since: dict[str, float] = {}
        for tracked in waiting:
            lost = []
            for task_id, order in tracked.open.items():
                holder = owners.get(task_id)
                if holder:
                    lost.append(holder not in alive)
                elif order < self._newest_taken.get(tracked.queue, -1):  # left its queue
                    since = unclaimed_since[task_id] = self._unclaimed_since.get(task_id, now)
                    lost.append(now - since >= lost_after_s)
                else:
                    lost.append(False)  # still in its queue
            if all(lost):
                holders = sorted({owners.get(task_id) or "that never claimed it" for task_id in tracked.open})
                self._redispatch(tracked, f"worker {', '.join(holders)} is gone")
        self._unclaimed_since = unclaimed_since

    def _taken(self, queue: str, order: int) -> None:
        """A delivery published ``order``-th left ``queue``: every earlier one there did too."""
        if order > self._newest_taken.get(queue, -1):
            self._newest_taken[queue] = order

    def _beat(self) -> None:
        try:
            self.liveness.beat("api", self.origin)
        except CONNECTION_ERRORS as exc:
            log.warning("could not refresh this API process's liveness key: %s", exc)

    def _expire(self) -> None:
        now = time.monotonic()
        for tracked in [t for t in self._chunks.values() if t.deadline <= now]:
            log.error("no result for chunk %s; giving up on it", tracked.dispatch.chunk_id)
            self._give_up(tracked, Lost("no result came back from the workers in time (chunk lost by the broker?)"))

    def _give_up(self, tracked: _Tracked, outcome: Outcome) -> None:
        chunk_id = tracked.dispatch.chunk_id
        for task_id in tracked.open:
            self._tasks.pop(task_id, None)
        self._chunks.pop(chunk_id, None)
        self._unsent.pop(chunk_id, None)
        tracked.dispatch.resolve(outcome)


def _skipped(meta: dict[str, Any]) -> str | None:
    result = meta.get("result")
    if meta.get("status") == states.SUCCESS and isinstance(result, dict):
        return result.get("skipped")
    return None
