"""Chaos: workers killed and stopped at random under mixed load, in Celery mode and in local mode.

The load is what a GRPO step sends: ``math`` answers (right and wrong), ``code`` submissions run in
the sandbox (passing and failing), ``exact`` answers and ``majority_vote`` groups, from two clients
sending batches back to back. Meanwhile a chaos thread strikes a random worker every few seconds:
kill -9 (a lost machine; a replacement is started, as an orchestrator would) or SIGSTOP (a frozen
one), resumed later. In Celery mode a stop outlasts the detection window; in local mode it stays
under the per-sample limit, since a longer one is what that limit exists to cut (``timeout``).

Every sample must be answered exactly once (one result, its own id, in order) with the verdict it
deserves. The time to recover from each fault (until every request that was out when it struck
is answered) is printed as p50 and max; it is never asserted. Brokers run on default settings.
"""

from __future__ import annotations

import os
import random
import signal
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from celery_support import (
    PLUGIN,
    PrivateRedis,
    ServiceThread,
    Worker,
    broker_url,
    celery_settings,
    launch_worker,
    start_worker,
    start_workers,
    stop_workers,
)

from rewardhub.execution.local import LocalExecutor
from rewardhub.settings import Settings

FIRST_FAULT_S, FAULT_EVERY_S = 3.0, 5.0
FAULTS = int(os.environ.get("REWARDHUB_CHAOS_FAULTS", "2"))
"""Faults per mode: two in CI (a short round); ``REWARDHUB_CHAOS_FAULTS=8`` for a longer soak."""
LOAD_S = FIRST_FAULT_S + FAULT_EVERY_S * FAULTS  # seconds of load per mode
BATCH = 36
DOUBLE = {"inputs": ["1\n", "4\n"], "outputs": ["2\n", "8\n"]}
CODE = {"name": "code", "config": {"scoring": "all_or_nothing"}}


def mixed_batch(rng: random.Random, tag: str) -> tuple[list[dict], dict[str, float]]:
    """A batch of samples of every kind, and the score each one deserves."""
    samples: list[dict] = []
    expected: dict[str, float] = {}
    while len(samples) < BATCH:
        i, kind, right = len(samples), rng.choice(["math", "math", "code", "exact", "group"]), rng.random() < 0.5
        sid = f"{tag}-{i}"
        if kind == "math":
            answer = rng.randint(2, 999)
            given = answer if right else answer + 1
            response = f"Adding up gives {given}.\nSo the final answer is $\\boxed{{{given}}}$."
            samples.append({"id": sid, "response": response, "reference": str(answer), "verifier": "math"})
        elif kind == "code":
            program = "print(int(input()) * 2)" if right else "print(int(input()) + 2)"
            response = f"```python\n{program}\n```"
            samples.append({"id": sid, "response": response, "reference": DOUBLE, "verifier": CODE})
        elif kind == "exact":
            samples.append({"id": sid, "response": "42" if right else "41", "reference": "42", "verifier": "exact"})
        else:  # a group of three: two agree, one does not
            a, b = rng.randint(1, 99), rng.randint(100, 199)
            for j, answer in enumerate([a, b, a]):
                samples.append(
                    {
                        "id": f"{sid}-{j}",
                        "response": f"The answer is $\\boxed{{{answer}}}$.",
                        "group": f"{sid}",
                        "verifier": "majority_vote",
                    }
                )
                expected[f"{sid}-{j}"] = 1.0 if answer == a else 0.0
            continue
        expected[sid] = 1.0 if right else 0.0
    return samples, expected


@dataclass
class Request:
    started: float
    answered: float = float("inf")
    problems: list[str] = field(default_factory=list)
    samples: int = 0


def client(url: str, seed: int, until: float, log: list[Request]) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=240) as http:
        n = 0
        while time.monotonic() < until:
            samples, expected = mixed_batch(rng, f"c{seed}-{n}")
            n += 1
            request = Request(time.monotonic(), samples=len(samples))
            log.append(request)
            response = http.post("/v1/score", json={"samples": samples})
            request.answered = time.monotonic()
            request.problems = check(samples, expected, response)


def check(samples: list[dict], expected: dict[str, float], response: httpx.Response) -> list[str]:
    """What is wrong with an answer: missing, duplicated, out of order, or a wrong verdict."""
    if response.status_code != 200:
        return [f"HTTP {response.status_code}: {response.text[:300]}"]
    results = response.json()["results"]
    if [r["id"] for r in results] != [s["id"] for s in samples]:
        return [f"{len(results)} results for {len(samples)} samples, or not in order"]
    return [
        f"{r['id']}: {r['status']} {r['score']} (expected ok {expected[r['id']]}): {r['error']}"
        for r in results
        if (r["status"], r["score"]) != ("ok", expected[r["id"]])
    ]


@dataclass
class Fault:
    at: float
    what: str


def run_chaos(url: str, strike: Callable[[random.Random], str], seed: int) -> tuple[list[Request], list[Fault]]:
    """Two clients for LOAD_S seconds; ``strike`` hits a random worker every FAULT_EVERY_S."""
    until = time.monotonic() + LOAD_S
    log: list[Request] = []
    clients = [threading.Thread(target=client, args=(url, seed + k, until, log)) for k in range(2)]
    for thread in clients:
        thread.start()
    rng, faults = random.Random(seed), []
    time.sleep(FIRST_FAULT_S)
    while time.monotonic() < until - FAULT_EVERY_S / 2:
        at = time.monotonic()
        faults.append(Fault(at, strike(rng)))
        time.sleep(max(0.0, at + FAULT_EVERY_S - time.monotonic()))
    for thread in clients:
        thread.join(timeout=300)
    return log, faults


def report(mode: str, log: list[Request], faults: list[Fault]) -> None:
    recoveries = [
        max((r.answered for r in log if r.started <= fault.at), default=fault.at) - fault.at for fault in faults
    ]
    print(
        f"\nchaos ({mode}): {len(log)} requests, {sum(r.samples for r in log)} samples; "
        f"faults: {', '.join(f.what for f in faults)}\n"
        f"  time to recover: p50 {statistics.median(recoveries):.1f}s   max {max(recoveries):.1f}s"
    )


def assert_all_answered_once_and_right(log: list[Request], faults: list[Fault]) -> None:
    assert faults and log
    assert all(r.answered < float("inf") for r in log), "a request got no answer"
    problems = [p for r in log for p in r.problems]
    assert problems == [], problems[:10]


def test_chaos_in_celery_mode(own_redis: PrivateRedis, tmp_path: Path) -> None:
    settings = celery_settings(
        "chaos",
        broker_url=broker_url("chaos", 0, own_redis.port),
        chunk_size=8,
        sample_timeout_s=5.0,
        code_timeout_s=10.0,
        max_timeout_s=10.0,
    )
    workers: list[Worker] = start_workers(settings, tmp_path, 2)
    workers.append(start_worker(settings, tmp_path, queues="code"))
    alive = list(workers)

    def strike(rng: random.Random) -> str:
        victim = rng.choice(alive)
        queues = "code" if "code" in victim.process.args else "cpu"
        if rng.random() < 0.5:
            victim.kill_tree()
            alive.remove(victim)
            replacement = launch_worker(settings, tmp_path, queues)  # as an orchestrator would
            workers.append(replacement)
            alive.append(replacement)
            return f"kill -9 {queues}"
        victim.signal_tree(signal.SIGSTOP)
        threading.Timer(settings.lost_after_s + 2, victim.signal_tree, (signal.SIGCONT,)).start()
        return f"SIGSTOP {queues} {settings.lost_after_s + 2:g}s"

    try:
        with ServiceThread(settings) as service:
            log, faults = run_chaos(service.url, strike, seed=20)
            report("celery", log, faults)
    finally:
        time.sleep(0.1)
        for worker in workers:
            worker.signal_tree(signal.SIGCONT)
        stop_workers(workers)
    assert_all_answered_once_and_right(log, faults)


def test_chaos_in_local_mode() -> None:
    settings = Settings.load(
        plugins=[str(PLUGIN)], workers=2, code_workers=1, sample_timeout_s=5.0, code_timeout_s=10.0
    )

    with ServiceThread(settings) as service:
        executor = service.app.state.service.executor
        assert isinstance(executor, LocalExecutor)
        httpx.post(f"{service.url}/v1/score", json={"samples": mixed_batch(random.Random(0), "warm")[0]}, timeout=120)

        def strike(rng: random.Random) -> str:
            pools = [executor.cpu_pool, executor.code_pool]
            pool = rng.choice(pools)
            ready = [w.process.pid for w in pool._workers if w.ready and w.process.is_alive()]
            if not ready:
                return "nothing to strike"
            pid = rng.choice(ready)
            if rng.random() < 0.5:
                os.kill(pid, signal.SIGKILL)
                return f"kill -9 {pool.name}"
            os.kill(pid, signal.SIGSTOP)
            threading.Timer(1.0, os.kill, (pid, signal.SIGCONT)).start()
            return f"SIGSTOP {pool.name} 1s"

        log, faults = run_chaos(service.url, strike, seed=40)
        report("local", log, faults)
    assert_all_answered_once_and_right(log, faults)


pytestmark = pytest.mark.slow
