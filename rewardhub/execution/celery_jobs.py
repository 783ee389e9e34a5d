"""``/v1/jobs`` records in the Celery engine's Redis, so a job outlives the API process that runs it.

The records are :class:`~rewardhub.jobs.redis_journal.RedisJobJournal`'s, the same as a shared job
store's; what the engine brings is its liveness. Each API process of the engine refreshes a
liveness key already (:class:`~rewardhub.execution.celery_liveness.Heartbeat`, so that workers skip
the chunks of a process that is gone), and a job's record names its process by the same instance
id, so the journal reads that key instead of keeping a second heartbeat.
"""

from __future__ import annotations

from rewardhub.execution.celery_liveness import Liveness

__all__ = ["CeleryJobLiveness"]


class CeleryJobLiveness:
    """An :class:`~rewardhub.jobs.liveness.OwnerLiveness` read from the engine's ``api`` liveness keys.

    ``start`` and ``stop`` do nothing: the executor's heartbeat begins with
    :meth:`CeleryExecutor.start` and forgets its key in :meth:`CeleryExecutor.close`.
    """

    def __init__(self, liveness: Liveness, instance: str) -> None:
        self.liveness = liveness
        self.owner = instance

    def start(self) -> None:
        pass

    def alive(self, owner: str) -> bool:
        return bool(owner) and owner in self.liveness.alive("api", [owner])

    def stop(self) -> None:
        pass
