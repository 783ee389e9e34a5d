"""Where each session lives, with ``execution: celery``: records every API process reads, in Redis.

A session is held by one session worker (``rewardhub worker --queues sessions``), for its whole
life. These records, in the Redis that holds the results (beside :mod:`celery_liveness`'s), are
what lets any API process send a session's calls to that worker, and tell a session whose worker
is gone from one that never was:

- ``rewardhub:sessions:<prefix>hosts``: the session workers of this deployment (a set; ``<prefix>``
  is the broker URL's ``queue_prefix``, so deployments sharing a Redis do not place sessions on each
  other's workers). A worker adds itself when it starts and removes itself when it stops; one that
  was killed is dropped by the next placement that finds its liveness key gone.
- ``rewardhub:sessions:<prefix>placed``: a counter; creations go to the live workers in turn.
- ``rewardhub:session:<id>``: the worker that holds session ``<id>`` and the key digest that owns it,
  kept as long as the session may live and a day beyond (so a late call still learns "lost").
- ``rewardhub:session-reply:<uuid>``: one operation's answer, pushed by the worker, popped by the API
  process that waits for it (a blocking pop: no polling delay on a session's calls).

Whether a worker is lost is :class:`~rewardhub.execution.celery_liveness.Liveness`'s: its key
``rewardhub:alive:worker:<node>`` expired.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .celery_liveness import Liveness

__all__ = ["Place", "SessionRecords"]

PREFIX = "rewardhub:"
TOMBSTONE_S = 86_400
"""How long past its possible end a session's record stays (its id then answers "lost", not "unknown")."""
REPLY_TTL_S = 300


@dataclass(frozen=True)
class Place:
    """Where a session lives and whose it is."""

    node: str
    owner: str


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SessionRecords:
    """The records above, through the results' Redis client (any thread may share it)."""

    def __init__(self, liveness: Liveness, queue_prefix: str) -> None:
        self.liveness = liveness
        self.client = liveness.client
        self._hosts = f"{PREFIX}sessions:{queue_prefix}hosts"
        self._placed = f"{PREFIX}sessions:{queue_prefix}placed"

    # --- the session workers ----------------------------------------------------------------------
    def join(self, node: str) -> None:
        self.client.sadd(self._hosts, node)

    def leave(self, node: str) -> None:
        self.client.srem(self._hosts, node)

    def live_hosts(self) -> list[str]:
        """The session workers alive now, in a stable order; dead ones are dropped from the set."""
        members = sorted(_text(m) for m in self.client.smembers(self._hosts))
        alive = self.liveness.alive("worker", members)
        dead = [m for m in members if m not in alive]
        if dead:
            self.client.srem(self._hosts, *dead)
        return [m for m in members if m in alive]

    def next_host(self, hosts: Sequence[str]) -> str:
        """The live worker whose turn it is to take a session."""
        return hosts[(int(self.client.incr(self._placed)) - 1) % len(hosts)]

    def alive(self, node: str) -> bool:
        return bool(self.liveness.alive("worker", [node]))

    # --- the sessions -----------------------------------------------------------------------------
    def place(self, session_id: str, place: Place, lifetime_s: float) -> None:
        value = json.dumps({"node": place.node, "owner": place.owner})
        self.client.set(f"{PREFIX}session:{session_id}", value, ex=int(lifetime_s) + TOMBSTONE_S)

    def where(self, session_id: str) -> Place | None:
        raw = self.client.get(f"{PREFIX}session:{session_id}")
        if raw is None:
            return None
        fields = json.loads(raw)
        return Place(str(fields["node"]), str(fields["owner"]))

    # --- answers ----------------------------------------------------------------------------------
    def reply(self, key: str, answer: dict[str, Any]) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(key, json.dumps(answer))
        pipe.expire(key, REPLY_TTL_S)
        pipe.execute()

    def wait_reply(self, key: str, wait_s: float) -> dict[str, Any] | None:
        """The answer pushed to ``key``, or None after ``wait_s`` (at least a second: BLPOP's unit)."""
        popped = self.client.blpop([key], timeout=max(1, round(wait_s)))
        return None if popped is None else json.loads(popped[1])


def reply_key(token: str) -> str:
    return f"{PREFIX}session-reply:{token}"
