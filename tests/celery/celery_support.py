"""Helpers of the Celery tests: brokers, worker processes, an API in ``execution: celery``.

Redis (127.0.0.1:6379) and RabbitMQ (127.0.0.1:5672, guest/guest) must be running on this
machine; tests that need one skip when it is unreachable. Each test session uses its own Redis
database and queue-name prefix, so parallel runs on one broker do not take each other's work.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import uvicorn

from rewardhub.api.app import create_app
from rewardhub.api.middleware.request_id import RequestIdMiddleware
from rewardhub.execution.celery_app import create_celery_app
from rewardhub.server import free_port
from rewardhub.settings import Settings

TESTS = Path(__file__).parent.parent
PLUGIN = TESTS / "plugins" / "testing_verifiers.py"
REDIS = ("127.0.0.1", 6379)
RABBIT = ("127.0.0.1", 5672)
SESSION = uuid.uuid4().hex[:8]
REDIS_DB = 1 + os.getpid() % 15


def reachable(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=1):
            return True
    except OSError:
        return False


def broker_url(prefix: str, db: int = REDIS_DB, port: int = REDIS[1]) -> str:
    """A Redis broker with its default settings (visibility timeout an hour); only the queue names are ours."""
    return f"redis://{REDIS[0]}:{port}/{db}?queue_prefix=t{SESSION}-{prefix}-"


def rabbit_url(prefix: str) -> str:
    """RabbitMQ with its default settings; only the queue names are ours."""
    return f"amqp://guest:guest@{RABBIT[0]}:{RABBIT[1]}//?queue_prefix=t{SESSION}-{prefix}-"


def redis_result_url(db: int = REDIS_DB) -> str:
    return f"redis://{REDIS[0]}:{REDIS[1]}/{db}"


@dataclass
class Worker:
    """A ``rewardhub worker`` process (and its children), with its log file."""

    process: subprocess.Popen[bytes]
    log: Path
    settings: Settings
    hostname: str = ""

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def kill_tree(self) -> None:
        """kill -9 the worker and every process under it, like a lost machine."""
        for proc in self.tree():
            try:
                proc.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        self.process.wait(timeout=10)

    def signal_tree(self, signum: int) -> None:
        """Send ``signum`` to the worker and every process under it (SIGSTOP: a frozen machine)."""
        for proc in self.tree():
            try:
                proc.send_signal(signum)
            except psutil.NoSuchProcess:
                pass

    def stop(self) -> None:
        stop_workers([self])

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def stop_workers(workers: list[Worker]) -> None:
    """Tear-down: kill each worker with everything under it (a graceful stop only costs time)."""
    for worker in workers:
        worker.kill_tree()


def start_workers(settings: Settings, tmp: Path, n: int, queues: str = "cpu") -> list[Worker]:
    """``n`` workers started side by side (each takes seconds to import its verifiers)."""
    workers = [launch_worker(settings, tmp, queues) for _ in range(n)]
    try:
        for worker in workers:
            worker.hostname = wait_for_worker(settings, worker.process)
    except BaseException:
        stop_workers(workers)  # none is left running when one fails to come up
        raise
    return workers


def start_worker(
    settings: Settings, tmp: Path, queues: str = "cpu", concurrency: int | None = 1, env: dict[str, str] | None = None
) -> Worker:
    worker = launch_worker(settings, tmp, queues, concurrency, env)
    try:
        worker.hostname = wait_for_worker(settings, worker.process)
    except BaseException:
        stop_workers([worker])
        raise
    return worker


def launch_worker(
    settings: Settings, tmp: Path, queues: str = "cpu", concurrency: int | None = 1, env: dict[str, str] | None = None
) -> Worker:
    log = tmp / f"worker-{uuid.uuid4().hex[:6]}.log"
    environ = {
        **os.environ,
        "REWARDHUB_BROKER_URL": settings.broker_url,
        "REWARDHUB_RESULT_BACKEND": settings.result_backend or "",
        "REWARDHUB_PLUGINS": ",".join(settings.plugins),
        "REWARDHUB_WORKER_MEMORY_MB": str(settings.worker_memory_mb),
        "REWARDHUB_RESULT_TTL_S": str(settings.result_ttl_s),  # the worker stores results, so it sets their expiry
        "REWARDHUB_HEARTBEAT_S": str(settings.heartbeat_s),
        "REWARDHUB_LOST_AFTER_S": str(settings.lost_after_s),
        "REWARDHUB_LOG_LEVEL": "info",
        **(env or {}),
    }
    if not settings.result_backend:
        environ.pop("REWARDHUB_RESULT_BACKEND")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rewardhub.cli",
                "worker",
                "--queues",
                queues,
                *(["--concurrency", str(concurrency)] if concurrency is not None else []),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environ,
            start_new_session=True,
        )
    return Worker(process, log, settings)


def wait_for_worker(settings: Settings, process: subprocess.Popen[bytes], timeout_s: float = 60) -> str:
    """Block until the worker answers a ping; returns its node name."""
    app = create_celery_app(settings)
    hostname = f"@{socket.gethostname()}"
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"worker exited with {process.returncode}")
            replies = app.control.inspect(timeout=0.5).ping() or {}
            for name in replies:
                if name.endswith(hostname) and f"-{process.pid}@" in name:
                    return name
        raise RuntimeError("worker did not answer a ping in time")
    finally:
        app.close()


class ServiceThread:
    """The real API (uvicorn, request-id middleware included) on a free loopback port, in a thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings.model_copy(update={"port": free_port(), "host": "127.0.0.1"})
        app = create_app(self.settings)
        if not any(m.cls is RequestIdMiddleware for m in app.user_middleware):
            app.add_middleware(RequestIdMiddleware)
        self.app = app
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.settings.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.settings.port}"

    def __enter__(self) -> ServiceThread:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("service did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def celery_settings(prefix: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "execution": "celery",
        "broker_url": broker_url(prefix),
        "plugins": [str(PLUGIN)],
        "chunk_size": 4,
        "sample_timeout_s": 5.0,
        "max_timeout_s": 10.0,
        "worker_memory_mb": 1024,
        "result_ttl_s": 600,
        **overrides,
    }
    return Settings.load(**values)


@dataclass
class CeleryService:
    url: str
    settings: Settings
    workers: list[Worker] = field(default_factory=list)


class PrivateRedis:
    """A redis-server of this test alone on a free port, without persistence, that can be restarted
    (the machine's shared Redis is never restarted by a test)."""

    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        self.dir = tmp
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*command, "--dir", str(self.dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 15
        while not reachable((REDIS[0], self.port)):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("private redis-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # like a crash: nothing is saved, every key is gone
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> PrivateRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ApiProcess:
    """``rewardhub serve --execution celery`` as its own process, so a test can kill -9 it."""

    def __init__(self, settings: Settings, tmp: Path) -> None:
        self.settings = settings
        self.port = free_port()
        self.log = tmp / f"api-{uuid.uuid4().hex[:6]}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ApiProcess:
        env = {
            **os.environ,
            "REWARDHUB_BROKER_URL": self.settings.broker_url,
            "REWARDHUB_PLUGINS": ",".join(self.settings.plugins),
            "REWARDHUB_CHUNK_SIZE": str(self.settings.chunk_size),
            "REWARDHUB_SAMPLE_TIMEOUT_S": str(self.settings.sample_timeout_s),
            "REWARDHUB_MAX_TIMEOUT_S": str(self.settings.max_timeout_s),
            "REWARDHUB_RESULT_TTL_S": str(self.settings.result_ttl_s),
            "REWARDHUB_HEARTBEAT_S": str(self.settings.heartbeat_s),
            "REWARDHUB_LOST_AFTER_S": str(self.settings.lost_after_s),
        }
        command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(self.port), "--execution", "celery"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        import httpx

        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"API did not become ready:\n{self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
