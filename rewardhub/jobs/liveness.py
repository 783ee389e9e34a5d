"""Whether the API process that runs a job is still there: what tells a job that will never
finish (its process died) from one that is only slow.

The Redis journal takes its liveness as a plug (:class:`OwnerLiveness`):

- :class:`OwnHeartbeat`: a key of this process that a thread of its own refreshes, for a service
  whose engine keeps none (local pools with ``job_store_url: redis://...``);
- the Celery engine's: its API processes refresh a liveness key already (workers skip the chunks
  of a process that is gone), and the journal reads that one
  (:class:`~rewardhub.execution.celery_jobs.CeleryJobLiveness`) instead of keeping a second.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from typing import Any, Protocol

__all__ = ["OwnHeartbeat", "OwnerLiveness", "process_name"]

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0
LOST_AFTER_S = 10  # an API process whose liveness key is this old is presumed gone


def process_name() -> str:
    """This API process, as ``host:pid:nonce`` (the nonce tells a recycled pid from its predecessor)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class OwnerLiveness(Protocol):
    owner: str
    """This process, as its job records name it."""

    def start(self) -> None:
        """This process is alive from now on (raises if that cannot be recorded)."""

    def alive(self, owner: str) -> bool:
        """Whether the process ``owner`` is still there."""

    def stop(self) -> None:
        """This process is going: say so, so polls learn at once that its jobs are gone."""


class OwnHeartbeat:
    """``rewardhub:jobs:alive:<owner>``, refreshed every :data:`HEARTBEAT_S` by a daemon thread and
    expiring after :data:`LOST_AFTER_S` on Redis's clock (hosts need not agree on the time)."""

    PREFIX = "rewardhub:jobs:alive:"

    def __init__(self, client: Any, unreachable: tuple[type[BaseException], ...]) -> None:
        self.client = client
        self.unreachable = unreachable
        self.owner = process_name()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rewardhub-job-heartbeat", daemon=True)

    def start(self) -> None:
        self._beat()  # the first beat is not caught: a store that cannot be reached is refused at start
        self._thread.start()

    def alive(self, owner: str) -> bool:
        return bool(owner) and bool(self.client.exists(self.PREFIX + owner))

    def stop(self) -> None:
        self._stop.set()
        try:
            self.client.delete(self.PREFIX + self.owner)
        except self.unreachable:
            pass  # the key expires by itself

    def _beat(self) -> None:
        self.client.set(self.PREFIX + self.owner, "1", ex=LOST_AFTER_S)

    def _loop(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self._beat()
            except self.unreachable as exc:
                log.warning("job records heartbeat failed: %s", exc)
