"""The Celery application, built from :class:`~rewardhub.settings.Settings` alone.

The API process (which only sends chunks and collects results) and every ``rewardhub worker``
build the same app from the same settings, so they agree on queues, limits and serialisation.
What "nothing is lost" needs from Celery, and where each piece is set:

- **late acknowledgement** (``task_acks_late``): a chunk is acknowledged after it is scored, so a
  worker that dies mid-chunk leaves the message to be delivered again;
  ``task_reject_on_worker_lost`` requeues it at once when a pool process dies under it.
- **prefetch 1** (``worker_prefetch_multiplier=1``, and on Redis ``worker_disable_prefetch``): a
  worker holds no more chunks than it has free processes, so a dead worker strands nothing
  beyond what it was running, and a waiting chunk's visibility clock does not tick.
- **time limits under the visibility timeout**: an unacknowledged message is handed out again
  once the broker's visibility timeout has passed (Redis's ``visibility_timeout``; RabbitMQ's
  ``consumer_timeout``, 30 minutes by default, closes the channel instead). A chunk must
  therefore always finish, or be killed by its hard time limit, well before that. The executor
  cuts chunks so that their limits (:func:`chunk_time_limits`) stay under
  :func:`max_task_seconds`, half the visibility timeout.
- **recycling**: pool processes are replaced after ``MAX_TASKS_PER_CHILD`` chunks or once their
  resident memory passes ``worker_memory_mb``, so a leak in a verifier cannot grow forever.
- **results** live in the result backend (Redis) for ``result_ttl_s`` seconds.
- **lost workers** are not left to the broker: a whole worker killed or stopped keeps its chunks
  from the broker for up to the visibility timeout (an hour on Redis). Workers and API processes
  keep liveness keys and records of who holds which delivery
  (:mod:`~rewardhub.execution.celery_liveness`), and the API dispatches a lost worker's chunks
  again within seconds (:mod:`~rewardhub.execution.celery_dispatch`), with the brokers' default
  settings. The visibility timeout remains the broker's own backstop.

Routing is by verifier kind: ``rule`` and ``group`` to ``cpu``, ``code`` to ``code``, ``model``
and ``judge`` to ``gpu`` (:func:`queue_for_kind`). Redis is the default broker and RabbitMQ
(``amqp://``) is supported; either way the result backend is Redis, because the executor
collects results by polling it (see :class:`PolledRedisBackend`).

Two broker options that settings do not have fields for ride on the broker URL's query string,
and are removed from it before Celery sees it::

    redis://redis:6379/0?visibility_timeout=3600&queue_prefix=staging-

``visibility_timeout`` (seconds) and ``queue_prefix`` (prepended to ``cpu``, ``code`` and ``gpu``,
so several deployments or test runs can share one broker).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from celery import Celery
from celery.backends.redis import RedisBackend
from kombu import Exchange, Queue

from rewardhub.errors import ExecutionError
from rewardhub.settings import Settings
from rewardhub.types import VerifierKind

__all__ = [
    "MAX_TASKS_PER_CHILD",
    "QUEUES",
    "SESSIONS",
    "TASK_SCORE_CHUNK",
    "TASK_SESSION_OP",
    "CONNECTION_ERRORS",
    "BrokerOptions",
    "KindRouter",
    "PolledRedisBackend",
    "TimeLimits",
    "broker_options",
    "chunk_time_limits",
    "create_celery_app",
    "max_task_seconds",
    "queue_for_kind",
    "session_queue",
]

QUEUES: tuple[str, ...] = ("cpu", "code", "gpu")
SESSIONS = "sessions"
"""The worker role that holds sessions (``rewardhub worker --queues sessions``): it consumes no queue
of :data:`QUEUES`, only one of its own (:func:`session_queue`)."""
TASK_SCORE_CHUNK = "rewardhub.score_chunk"
TASK_SESSION_OP = "rewardhub.session_op"
MAX_TASKS_PER_CHILD = 10_000  # a recycled child re-warms its call pool: seconds, so not too often

DEFAULT_VISIBILITY_S = {"redis": 3600, "amqp": 1800}  # Redis's kombu default; RabbitMQ's consumer_timeout
MIN_VISIBILITY_S = 10.0
SOFT_GRACE_S = 2.0  # a chunk's soft limit: the sum of its calls' limits plus this
HARD_GRACE_S = 2.0  # and its hard limit a little later still

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (OSError, ConnectionError)
try:  # the exact connection errors of the clients we use
    import redis.exceptions
    from kombu.exceptions import OperationalError

    CONNECTION_ERRORS += (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OperationalError)
except ImportError:  # pragma: no cover - celery[redis] brings both
    pass

_KIND_QUEUE: dict[str, str] = {"rule": "cpu", "group": "cpu", "code": "code", "model": "gpu", "judge": "gpu"}
_URL_OPTIONS = ("visibility_timeout", "queue_prefix")


def queue_for_kind(kind: VerifierKind | str) -> str:
    """The logical queue (``cpu``, ``code`` or ``gpu``) that scores calls of a verifier kind."""
    try:
        return _KIND_QUEUE[kind]
    except KeyError:
        raise ExecutionError(f"no queue for verifier kind {kind!r}") from None


@dataclass(frozen=True)
class BrokerOptions:
    url: str  # the broker URL without our query options
    transport: str  # "redis" or "amqp"
    visibility_timeout_s: float
    queue_prefix: str

    def queue(self, logical: str) -> str:
        return self.queue_prefix + logical


def session_queue(options: BrokerOptions, node: str) -> Queue:
    """The queue of one session worker (``node``): the operations on the sessions it holds go there and
    nowhere else. RabbitMQ deletes it once its worker's connection is gone (``auto_delete``); a message
    left in it on Redis expires unread (see :mod:`~rewardhub.execution.celery_sessions`)."""
    name = options.queue(f"{SESSIONS}.{node}")
    return Queue(name, Exchange(name, type="direct"), routing_key=name, auto_delete=True)


def queue_of_chunk(payload: Mapping[str, Any]) -> str:
    """The logical queue a chunk payload goes to: its first call's kind decides."""
    calls = payload.get("calls") or [{}]
    return queue_for_kind(calls[0].get("kind", "rule"))


@dataclass(frozen=True)
class TimeLimits:
    soft_s: float
    hard_s: float


def broker_options(settings: Settings) -> BrokerOptions:
    """Split our options off the broker URL and fill in per-broker defaults."""
    parts = urlsplit(settings.broker_url)
    scheme = parts.scheme.lower()
    if scheme in ("redis", "rediss"):
        transport = "redis"
    elif scheme in ("amqp", "amqps", "pyamqp"):
        transport = "amqp"
    else:
        raise ExecutionError(f"unsupported broker {settings.broker_url!r}: use redis:// or amqp://")
    ours = {k: v for k, v in parse_qsl(parts.query) if k in _URL_OPTIONS}
    theirs = [(k, v) for k, v in parse_qsl(parts.query) if k not in _URL_OPTIONS]
    try:
        visibility = float(ours.get("visibility_timeout", DEFAULT_VISIBILITY_S[transport]))
    except ValueError:
        raise ExecutionError(
            f"visibility_timeout in the broker URL is not a number: {ours['visibility_timeout']!r}"
        ) from None
    if visibility < MIN_VISIBILITY_S:
        raise ExecutionError(
            f"visibility_timeout={visibility:g}s leaves no room for a chunk; use at least {MIN_VISIBILITY_S:g}"
        )
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(theirs), parts.fragment))
    return BrokerOptions(url, transport, visibility, ours.get("queue_prefix", ""))


def max_task_seconds(options: BrokerOptions) -> float:
    """Longest hard limit a chunk may have: 45% of the visibility timeout.

    On RabbitMQ a prefetched chunk waiting behind a running one is already delivered, so two
    hard limits must fit in one timeout, with a margin (10%) for the trip back to the broker."""
    return options.visibility_timeout_s * 0.45


def chunk_time_limits(timeouts: Sequence[float]) -> TimeLimits:
    """Soft and hard limits of a chunk whose calls run one after another with these limits.

    Each call is already killed at its own limit by the worker; these are the backstop for what
    a per-call limit cannot stop (C code in a model verifier running in the worker process).
    """
    soft = sum(timeouts) + SOFT_GRACE_S
    return TimeLimits(soft_s=soft, hard_s=soft + HARD_GRACE_S)


class PolledRedisBackend(RedisBackend):
    """Redis result backend for a long-lived API process that polls for results.

    Celery's Redis backend subscribes to a pub/sub channel per task at send time so that
    ``AsyncResult.get()`` can wake up; our executor never calls ``get()`` (it polls with MGET
    from one thread), so those subscriptions would only pile up unread messages on the
    connection until Redis drops it. Everything else is the stock backend.
    """

    def on_task_call(self, producer: Any, task_id: str) -> None:
        return None


class KindRouter:
    """Celery router: a chunk goes to the queue of its calls' verifier kind."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(
        self,
        name: str,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        options: Mapping[str, Any],
        task: Any = None,
        **kw: Any,
    ) -> dict[str, str] | None:
        if name != TASK_SCORE_CHUNK or not args:
            return None
        return {"queue": self.prefix + queue_of_chunk(args[0])}


def result_backend_url(settings: Settings, options: BrokerOptions) -> str:
    url = settings.result_backend or (options.url if options.transport == "redis" else None)
    if url is None:
        raise ExecutionError(
            "with a RabbitMQ broker, set result_backend to a Redis URL (results are collected from Redis)"
        )
    if urlsplit(url).scheme.lower() not in ("redis", "rediss"):
        raise ExecutionError(f"result_backend must be Redis (redis:// or rediss://), not {url!r}")
    return url


def create_celery_app(settings: Settings) -> Celery:
    """The Celery app of this deployment, without tasks.

    The API only sends ``rewardhub.score_chunk`` by name; a worker registers the task on its app
    (:func:`rewardhub.execution.celery_tasks.register_tasks`). This module is the bottom layer of
    the Celery modules: it imports none of them (``celery_tasks`` builds on it, ``celery_worker``
    and ``celery_executor`` on both)."""
    options = broker_options(settings)
    backend = f"{__name__}:PolledRedisBackend+{result_backend_url(settings, options)}"
    app = Celery("rewardhub", broker=options.url, backend=backend, set_as_current=False)
    app.conf.update(_config(settings, options))
    app.rewardhub_settings = settings  # type: ignore[attr-defined]
    app.rewardhub_broker = options  # type: ignore[attr-defined]
    return app


def _config(settings: Settings, options: BrokerOptions) -> dict[str, Any]:
    max_hard = max_task_seconds(options)
    queues = [
        Queue(options.queue(q), Exchange(options.queue(q), type="direct"), routing_key=options.queue(q)) for q in QUEUES
    ]
    config: dict[str, Any] = {
        # serialisation: JSON only, payloads are pydantic models dumped to plain data
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        # nothing is lost
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "task_soft_time_limit": max_hard - HARD_GRACE_S,
        "task_time_limit": max_hard,
        "worker_max_tasks_per_child": MAX_TASKS_PER_CHILD,
        "worker_max_memory_per_child": settings.worker_memory_mb * 1024,  # KiB
        # results
        "result_expires": settings.result_ttl_s,
        "task_ignore_result": False,
        "task_track_started": False,
        "redis_retry_on_timeout": True,
        "redis_socket_keepalive": True,
        "redis_socket_connect_timeout": 5,
        "redis_socket_timeout": 10,  # a restarted Redis fails calls in seconds, not Celery's 120 s
        "redis_backend_health_check_interval": 10,
        # queues and routing
        "task_queues": queues,
        "task_default_queue": options.queue("cpu"),
        "task_default_exchange": options.queue("cpu"),
        "task_default_routing_key": options.queue("cpu"),
        "task_routes": (KindRouter(options.queue_prefix),),
        # connections: the API fails a publish fast (503), workers reconnect forever
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "broker_channel_error_retry": True,
        "task_publish_retry": True,
        "task_publish_retry_policy": {
            "max_retries": 3,
            "interval_start": 0.1,
            "interval_step": 0.5,
            "interval_max": 1.0,
        },
        # logs are ours (JSON, with request ids)
        "worker_hijack_root_logger": False,
        "worker_send_task_events": False,
        "worker_enable_remote_control": True,
    }
    if options.transport == "redis":
        config["worker_disable_prefetch"] = True
        config["broker_transport_options"] = {
            "visibility_timeout": options.visibility_timeout_s,
            # sweep for messages of dead workers often enough that redelivery follows the timeout
            "unacked_restore_interval": max(1, min(10, int(options.visibility_timeout_s // 20))),
            "unacked_restore_throttle": 1,
            "socket_keepalive": True,
            "socket_connect_timeout": 5,
            "health_check_interval": 10,
        }
    else:
        config["broker_transport_options"] = {"confirm_publish": True}
    return config
