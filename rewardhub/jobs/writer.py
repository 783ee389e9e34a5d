"""The one writer thread of a journal: writes after a job's first leave the event loop.

Accepting a job writes its record at once (a job answered 202 must be findable from any process);
every later write (progress, the end) is queued here and applied in order by one daemon thread, so
the event loop never waits on the store. Progress is coalesced to the latest count per job: a job
of a thousand chunks costs as many writes as the thread has time for, not a thousand.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["RecordWriter"]

log = logging.getLogger(__name__)


class RecordWriter:
    """Applies queued writes in order from one daemon thread, started by the first write.

    ``unreachable``: the exceptions that mean the store is away (logged in a line; the job goes
    on and only its record falls behind); anything else is logged with its traceback.
    """

    def __init__(self, name: str, unreachable: tuple[type[BaseException], ...] = ()) -> None:
        self.name = name
        self.unreachable = unreachable
        self._ops: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._progress: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, op: Callable[[], None]) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name=self.name, daemon=True)
                self._thread.start()
        self._ops.put(op)

    def progress(self, job_id: str, done: int, write: Callable[[str, int], None]) -> None:
        """Queue ``write(job_id, done)`` unless a write of this job's progress is queued already
        (that one will write the latest count)."""
        with self._lock:
            queued = job_id in self._progress
            self._progress[job_id] = done
        if not queued:
            self.put(lambda: self._flush(job_id, write))

    def close(self, timeout_s: float = 10.0) -> None:
        """Apply everything queued (up to ``timeout_s``), then stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._ops.put(None)
            thread.join(timeout_s)

    def _flush(self, job_id: str, write: Callable[[str, int], None]) -> None:
        with self._lock:
            done = self._progress.pop(job_id, None)
        if done is not None:
            write(job_id, done)

    def _drain(self) -> None:
        while (op := self._ops.get()) is not None:
            try:
                op()
            except self.unreachable as exc:
                log.warning("could not write a job record: %s", exc)
            except Exception:  # a record falls behind; the job itself goes on and the thread keeps writing
                log.exception("could not write a job record")
