"""``rewardhub worker``: a Celery worker that scores chunks exactly as the local engine would.

Process layout. The worker is Celery's prefork pool: one main process that talks to the broker
and ``concurrency`` child processes that run chunks. Inside a child, calls run where the local
engine would run them, with the same guarantees:

- ``cpu`` (rule and group verifiers) and ``code`` calls go to a one-process
  :class:`~rewardhub.execution.pool.WorkerPool` owned by the child: a hard wall-clock limit per
  call, an address-space limit, and a verifier that kills its process costs that sample an
  ``error``, never the chunk. The results are therefore those of local mode.
- ``gpu`` (model and judge verifiers) calls run in the child itself, because the model must stay
  loaded: a GPU worker runs one child per device, pins it to its device after the fork, and each
  verifier loads its model once, on first use, in that child. Calls of one verifier and config
  go to ``score_batch`` together; a ``SIGALRM`` bounds Python-level hangs and Celery's hard time
  limit (which kills the child) bounds the rest.

Poison. A sample that kills the child itself (a CUDA crash in a model verifier, the OOM killer)
takes the chunk down with it; late acknowledgement hands the chunk out again. The
:class:`DeliveryLedger` (in Redis, next to the results) counts deliveries: the first runs the
chunk at full speed; a redelivery runs it call by call, recording each finished call and each
attempt, so finished work is not redone and a call that was running when a child died once more
is reported as ``error`` instead of being retried forever. The ledger is keyed by the chunk, not
the task, so it also counts the API's own re-dispatches.

Loss. A whole worker that is killed or stopped keeps its chunks from the broker for up to the
visibility timeout, so each worker also keeps the records of :mod:`celery_liveness`: its main
process refreshes a liveness key every ``heartbeat_s`` and records, as each message arrives,
that it holds that delivery. The API re-dispatches the chunks of a worker whose key expired. A
delivery about to start is skipped when its chunk is already settled, was dispatched again since,
or its API is gone; one that finishes after the chunk was dispatched again is dropped: it was
presumed lost for a reason (a stopped worker sees its calls and sandboxed programs overrun their
wall-clock limits), and the newer dispatch judges them without it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import types
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import process as mp_process
from typing import Any

from celery import Celery, signals
from celery.exceptions import SoftTimeLimitExceeded

from rewardhub.calls import Call, failure, run_call
from rewardhub.errors import RewardhubError
from rewardhub.execution.celery_app import CONNECTION_ERRORS, QUEUES, create_celery_app, queue_for_kind
from rewardhub.execution.celery_liveness import SKIP_SUPERSEDED, Heartbeat, Liveness, liveness_for
from rewardhub.execution.celery_tasks import CallPayload, ChunkOutcome, ChunkPayload, register_tasks
from rewardhub.execution.pool import WorkerPool, fork_server_modules
from rewardhub.logging import configure_logging
from rewardhub.registry import Registry
from rewardhub.settings import Settings, use
from rewardhub.types import TIMEOUT, Result, Sample

__all__ = ["DeliveryLedger", "WorkerRuntime", "run_worker", "visible_devices", "worker_runtime"]

log = logging.getLogger(__name__)

POISON_ATTEMPTS = 1  # careful attempts a call gets after the fast pass of its chunk died
LEDGER_PREFIX = "rewardhub:chunk:"
WARM_WAIT_S = 120.0  # how long a new child may take to bring up its call pools


class DeliveryLedger:
    """Per-chunk delivery counts, call attempts and finished calls, kept in Redis for ``ttl_s``."""

    def __init__(self, client: Any, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s

    def begin(self, task_id: str) -> int:
        """Count one more delivery of this chunk and return the count (1 the first time)."""
        key = f"{LEDGER_PREFIX}{task_id}:deliveries"
        pipe = self.client.pipeline()
        pipe.incr(key)
        pipe.expire(key, self.ttl_s)
        return int(pipe.execute()[0])

    def attempts(self, task_id: str) -> dict[int, int]:
        raw = self.client.hgetall(f"{LEDGER_PREFIX}{task_id}:attempts")
        return {int(k): int(v) for k, v in raw.items()}

    def attempt(self, task_id: str, index: int) -> None:
        key = f"{LEDGER_PREFIX}{task_id}:attempts"
        pipe = self.client.pipeline()
        pipe.hincrby(key, str(index), 1)
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def finished(self, task_id: str) -> dict[int, list[Result]]:
        raw = self.client.hgetall(f"{LEDGER_PREFIX}{task_id}:done")
        return {int(k): [Result.model_validate(r) for r in json.loads(v)] for k, v in raw.items()}

    def record(self, task_id: str, index: int, results: list[Result]) -> None:
        key = f"{LEDGER_PREFIX}{task_id}:done"
        pipe = self.client.pipeline()
        pipe.hset(key, str(index), json.dumps([r.model_dump(mode="json") for r in results]))
        pipe.expire(key, self.ttl_s)
        pipe.execute()


Prepared = Call | list[Result]  # a call to run, or the results of one that could not even start


class WorkerRuntime:
    """Everything one worker child process keeps between chunks: registry, pools, ledger."""

    def __init__(
        self, settings: Settings, registry: Registry, ledger: DeliveryLedger, liveness: Liveness | None = None
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.ledger = ledger
        self.liveness = liveness
        self.pid = os.getpid()
        self._pools: dict[str, WorkerPool] = {}
        self._pools_lock = threading.Lock()

    def score_chunk(self, chunk: ChunkPayload, task_id: str, hostname: str) -> ChunkOutcome:
        chunk_id = chunk.chunk_id or task_id
        skip = self._skip_reason(chunk, chunk_id, task_id)
        if skip is not None:
            log.info("chunk %s (task %s) not scored: %s", chunk_id, task_id, skip, extra={"task_id": task_id})
            return ChunkOutcome(results=[], worker=hostname, delivery=0, skipped=skip)
        outcome = self._score(chunk, chunk_id, hostname)
        if self._superseded(chunk_id, task_id):
            log.warning(
                "chunk %s was dispatched again while task %s ran; dropping this delivery's results",
                chunk_id,
                task_id,
                extra={"task_id": task_id},
            )
            return ChunkOutcome(results=[], worker=hostname, delivery=outcome.delivery, skipped=SKIP_SUPERSEDED)
        return outcome

    def _skip_reason(self, chunk: ChunkPayload, chunk_id: str, task_id: str) -> str | None:
        if self.liveness is None:
            return None
        try:
            return self.liveness.skip_reason(chunk_id, task_id, chunk.origin)
        except CONNECTION_ERRORS as exc:  # cannot tell: scoring is the safe side
            log.warning("cannot read the state of chunk %s: %s", chunk_id, exc)
            return None

    def _superseded(self, chunk_id: str, task_id: str) -> bool:
        if self.liveness is None:
            return False
        try:
            return self.liveness.superseded(chunk_id, task_id)
        except CONNECTION_ERRORS:
            return False

    def _score(self, chunk: ChunkPayload, chunk_id: str, hostname: str) -> ChunkOutcome:
        """Score one delivery, counted in the ledger by chunk (not task) id."""
        prepared = [self._prepare(payload) for payload in chunk.calls]
        delivery = 1
        try:
            delivery = self.ledger.begin(chunk_id)
            log.info(
                "scoring chunk %s: %d calls",
                chunk_id,
                len(prepared),
                extra={"chunk_id": chunk_id, "delivery": delivery},
            )
            if delivery == 1:
                results = self._run(prepared)
            else:
                log.warning(
                    "chunk %s redelivered (delivery %d); scoring call by call",
                    chunk_id,
                    delivery,
                    extra={"chunk_id": chunk_id, "delivery": delivery},
                )
                results = self._run_carefully(chunk_id, prepared, delivery)
        except SoftTimeLimitExceeded:
            log.error("chunk %s exceeded its soft time limit outside its calls", chunk_id)
            results = [
                item
                if isinstance(item, list)
                else failure(item, "the chunk exceeded its time limit on the worker", status=TIMEOUT)
                for item in prepared
            ]
        return ChunkOutcome(results=results, worker=hostname, delivery=delivery)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown()
        self._pools.clear()

    # --- running -----------------------------------------------------------------------------
    def _prepare(self, payload: CallPayload) -> Prepared:
        try:
            config = self.registry.validate_config(payload.verifier, payload.config)
        except RewardhubError as exc:
            score = float(payload.config.get("failure_score", 0.0) or 0.0)
            return [Result.failed(f"worker cannot run {payload.verifier!r}: {exc.message}", score=score)] * len(
                payload.samples
            )
        return Call(payload.verifier, config, tuple(payload.samples), payload.kind, payload.timeout_s)

    def _run(self, prepared: Sequence[Prepared]) -> list[list[Result]]:
        """All calls of a chunk: pooled ones submitted at once, in-process ones meanwhile."""
        results: list[list[Result] | None] = [p if isinstance(p, list) else None for p in prepared]
        waiting: list[tuple[int, Future[list[Result]]]] = []
        in_process: list[int] = []
        for i, item in enumerate(prepared):
            if isinstance(item, Call):
                if queue_for_kind(item.kind) == "gpu":
                    in_process.append(i)
                else:
                    waiting.append((i, self._pool(queue_for_kind(item.kind)).submit([item])[0]))
        try:
            for batch in _batches(prepared, in_process):
                for i, value in zip(batch, self._run_in_process([prepared[k] for k in batch]), strict=True):  # type: ignore[misc]
                    results[i] = value
            for i, future in waiting:
                results[i] = future.result()
        except SoftTimeLimitExceeded:
            log.error("chunk exceeded its soft time limit; unfinished calls time out")
        out = []
        for item, value in zip(prepared, results, strict=True):
            if value is None:
                value = failure(item, "the chunk exceeded its time limit on the worker", status=TIMEOUT)  # type: ignore[arg-type]
            out.append(value)
        return out

    def _run_carefully(self, task_id: str, prepared: Sequence[Prepared], delivery: int) -> list[list[Result]]:
        finished = self.ledger.finished(task_id)
        attempts = self.ledger.attempts(task_id)
        give_up = delivery > 2 + len(prepared)  # no call is to blame, yet the chunk keeps dying
        out: list[list[Result]] = []
        for i, item in enumerate(prepared):
            if i in finished:
                out.append(finished[i])
            elif isinstance(item, list):
                out.append(item)
            elif give_up or attempts.get(i, 0) >= POISON_ATTEMPTS:
                log.error(
                    "poison sample: %s killed the worker while scoring it; reporting an error",
                    item.verifier,
                    extra={"task_id": task_id, "call_index": i, "delivery": delivery},
                )
                out.append(
                    failure(
                        item,
                        f"the worker process died while scoring this sample (delivery {delivery} of its chunk); "
                        "not retried again",
                        reason="poison",
                    )
                )
            else:
                self.ledger.attempt(task_id, i)
                [value] = self._run([item])
                self.ledger.record(task_id, i, value)
                out.append(value)
        return out

    def _run_in_process(self, calls: Sequence[Call]) -> list[list[Result]]:
        """Calls of one model verifier and config, batched; bounded by the largest call limit."""
        limit = max(call.timeout_s for call in calls)
        try:
            with _alarm(limit):
                flat = run_call(self.registry, Call.batch(calls))
        except _CallTimedOut:
            return [failure(call, f"timed out after {call.timeout_s:g}s", status=TIMEOUT) for call in calls]
        except Exception as exc:  # loading the model failed: every call of the batch says why
            return [
                failure(call, f"verifier {call.verifier!r} could not load: {type(exc).__name__}: {exc}")
                for call in calls
            ]
        return [[result] for result in flat]

    def warm(self, queues: Sequence[str]) -> None:
        """Start the call pools of these queues and score one probe call in each, before the
        first chunk: a pool process needs seconds to import its verifiers, and a call's clock
        starts when it is handed to the pool, so a cold pool would time out the first calls."""
        probe = self._probe_call()
        for queue in queues:
            if queue in ("cpu", "code"):
                pool = self._pool(queue)
                if probe is not None:
                    pool.submit([probe])[0].result(timeout=WARM_WAIT_S)

    def _probe_call(self) -> Call | None:
        """A call of some CPU verifier that accepts its default config; its result is ignored."""
        for name in self.registry.names():
            if self.registry.verifier_class(name).kind == "rule":
                try:
                    config = self.registry.validate_config(name, {})
                except RewardhubError:
                    continue
                return Call(name, config, (Sample(response="warm-up"),), "rule", WARM_WAIT_S)
        return None

    def _pool(self, queue: str) -> WorkerPool:
        with self._pools_lock:
            pool = self._pools.get(queue)
            if pool is None:
                memory = self.settings.worker_memory_mb if queue == "cpu" else None  # the sandbox sets its own limits
                pool = WorkerPool(
                    f"celery-{queue}",
                    1,
                    plugin_files=self.registry.plugin_files,
                    memory_mb=memory,
                    preload=fork_server_modules(self.registry, kinds=("rule", "group")),
                    warm_kinds=("code",) if queue == "code" else (),  # its process starts its warm sandbox
                    settings=self.settings,
                )
                pool.start()
                self._pools[queue] = pool
            return pool


def _batches(prepared: Sequence[Prepared], indices: Sequence[int]) -> list[list[int]]:
    """Group in-process calls by verifier and config, keeping first-seen order."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i in indices:
        call = prepared[i]
        assert isinstance(call, Call)
        key = (call.verifier, json.dumps(call.config.model_dump(mode="json"), sort_keys=True))
        groups.setdefault(key, []).append(i)
    return list(groups.values())


class _CallTimedOut(BaseException):
    """Raised by SIGALRM inside a model call. A BaseException, so verifiers' ``except Exception``
    cannot swallow it."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals only reach the main thread; Celery's hard limit still applies
        return

    def _raise(signum: int, frame: types.FrameType | None) -> None:
        raise _CallTimedOut()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- per-process runtime ---------------------------------------------------------------------
@dataclass
class _WorkerState:
    registry: Registry | None = None
    runtime: WorkerRuntime | None = None
    devices: tuple[str, ...] = ()
    app: Celery | None = None
    queues: tuple[str, ...] = ()


_state = _WorkerState()


_runtime_lock = threading.Lock()


def worker_runtime(app: Celery) -> WorkerRuntime:
    """This process's runtime, created on first use after the fork (so models load per child)."""
    with _runtime_lock:
        runtime = _state.runtime
        if runtime is None or runtime.pid != os.getpid():
            settings: Settings = app.rewardhub_settings  # type: ignore[attr-defined]
            registry = _state.registry or Registry.load(settings.plugins)
            ledger = DeliveryLedger(app.backend.client, settings.result_ttl_s)
            runtime = _state.runtime = WorkerRuntime(settings, registry, ledger, liveness_for(app))
        return runtime


def _on_child_start(**_: Any) -> None:
    """After the fork: let the child own processes, and pin a GPU child to its device before
    anything touches CUDA.

    Celery's pool (billiard) installs its own daemonic process object as ``multiprocessing``'s
    current process, which forbids children and carries an authkey ``multiprocessing`` refuses to
    send; ours must start children (the call pool), so that object is made non-daemonic with a
    ``multiprocessing`` authkey. The call pool's processes are not orphaned when the child dies:
    they exit when their pipe to it closes.
    """
    _state.runtime = None
    current = mp_process.current_process()
    current._config = {**current._config, "daemon": False, "authkey": mp_process.AuthenticationString(os.urandom(32))}  # type: ignore[attr-defined]
    if _state.app is not None and _state.queues != ("gpu",):
        # before the child takes its first chunk (run_worker gives children time for this): a
        # chunk's time limits start when it does, so it must not wait for the pools itself
        _warm(_state.app, _state.queues)
    if _state.devices:
        from billiard.process import current_process

        index = getattr(current_process(), "index", 0) or 0
        os.environ["CUDA_VISIBLE_DEVICES"] = _state.devices[index % len(_state.devices)]
        log.info("worker child %d pinned to device %s", os.getpid(), os.environ["CUDA_VISIBLE_DEVICES"])


def _warm(app: Celery, queues: Sequence[str]) -> None:
    try:
        worker_runtime(app).warm(queues)
    except Exception as exc:  # the first chunk will start the pool itself, and say what failed
        log.warning("could not warm the call pools: %r", exc)


def _on_child_stop(**_: Any) -> None:
    if _state.runtime is not None and _state.runtime.pid == os.getpid():
        _state.runtime.close()


def visible_devices() -> tuple[str, ...]:
    """GPU ids this worker may use: ``CUDA_VISIBLE_DEVICES`` if set, else what nvidia-smi lists.

    Found without importing torch: CUDA must not be initialised before the fork.
    """
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return tuple(d.strip() for d in env.split(",") if d.strip() and d.strip() != "-1")
    if shutil.which("nvidia-smi") is None:
        return ()
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(line.strip() for line in out.stdout.splitlines() if line.strip())


def run_worker(settings: Settings, queues: Sequence[str], concurrency: int | None = None) -> int:
    """Run a Celery worker on ``queues`` until it is told to stop; returns its exit code."""
    configure_logging(settings.log_level, settings.log_format)
    use(settings)  # its child processes fork from here, and inherit it
    queues = list(queues) or ["cpu"]
    unknown = [q for q in queues if q not in QUEUES]
    if unknown:
        log.error("unknown queues %s; choose from %s", unknown, ", ".join(QUEUES))
        return 2
    if "gpu" in queues and len(queues) > 1:
        log.error(
            "a GPU worker consumes only the gpu queue (one process per device); run another worker for %s",
            [q for q in queues if q != "gpu"],
        )
        return 2
    app = create_celery_app(settings)
    register_tasks(app, worker_runtime)
    _state.registry = Registry.load(settings.plugins)  # fail fast, and children inherit it
    _state.app, _state.queues = app, tuple(queues)
    app.conf.worker_proc_alive_timeout = WARM_WAIT_S  # a child warms its call pools before it reports up
    if queues == ["gpu"]:
        _state.devices = visible_devices()
        processes = concurrency or max(1, len(_state.devices))
        app.conf.worker_max_tasks_per_child = None  # a loaded model is worth keeping
        app.conf.worker_max_memory_per_child = None
    else:
        processes = concurrency or max(
            settings.cpu_workers() if "cpu" in queues else 1, settings.code_worker_count() if "code" in queues else 1
        )
    signals.setup_logging.connect(_keep_our_logging, weak=False)
    signals.worker_process_init.connect(_on_child_start, weak=False)
    signals.worker_process_shutdown.connect(_on_child_stop, weak=False)
    options = app.rewardhub_broker  # type: ignore[attr-defined]
    hostname = f"rewardhub-{'-'.join(queues)}-{os.getpid()}@{socket.gethostname()}"
    log.info("worker %s: queues %s, %d processes, broker %s", hostname, queues, processes, options.transport)
    worker = app.Worker(
        hostname=hostname,
        queues=[options.queue(q) for q in queues],
        concurrency=processes,
        pool="prefork",
        loglevel=settings.log_level.upper(),
        optimization="fair",
        without_mingle=True,
        without_gossip=True,
        quiet=True,
    )
    liveness = liveness_for(app)
    heartbeat = Heartbeat(liveness, "worker", hostname, settings.heartbeat_s, CONNECTION_ERRORS)
    heartbeat.start()  # alive before the first message arrives
    signals.task_received.connect(_claimer(liveness), weak=False)
    try:
        worker.start()
    finally:
        heartbeat.stop()
    return int(worker.exitcode or 0)


def _claimer(liveness: Liveness) -> Any:
    """Connected to ``task_received`` (main process, as a message arrives): record who holds it."""

    def claim(sender: Any = None, request: Any = None, **_: Any) -> None:
        hostname = getattr(sender, "hostname", None) or getattr(request, "hostname", None) or ""
        try:
            liveness.claim(request.id, hostname)
        except CONNECTION_ERRORS as exc:  # the API then waits for the broker to give the chunk back
            log.warning("could not record that %s holds task %s: %s", hostname, request.id, exc)

    return claim


def _keep_our_logging(**_: Any) -> None:
    """Connected to Celery's ``setup_logging``: our JSON logging stays in place."""
