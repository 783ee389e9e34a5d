"""The worker pool directly: chunks, batched answers, and exact blame when a call overruns."""

from __future__ import annotations

import os
import signal
import time

import pytest

from rewardhub.calls import Call
from rewardhub.execution.pool import WorkerPool
from rewardhub.registry import Registry
from rewardhub.types import Sample


@pytest.fixture(scope="module")
def registry(plugin_file) -> Registry:
    return Registry.load([plugin_file])


@pytest.fixture(scope="module")
def pool(registry: Registry):
    pool = WorkerPool("test", 1, plugin_files=registry.plugin_files, memory_mb=1024)
    pool.start()
    yield pool
    pool.shutdown()


def sleepy(registry: Registry, seconds: str, timeout_s: float = 1.0) -> Call:
    config = registry.validate_config("test_sleepy", {})
    return Call("test_sleepy", config, (Sample(response=seconds),), "rule", timeout_s)


def test_the_overrunning_call_is_blamed_even_inside_a_batch_of_unreported_answers(pool, registry):
    # One worker, so these leave as one chunk: ten instant calls answered in one batch message
    # that has not been sent yet when the eleventh call starts sleeping past its limit.
    calls = [sleepy(registry, "0")] * 10 + [sleepy(registry, "60")] + [sleepy(registry, "0")] * 30
    statuses = [future.result(timeout=60)[0].status for future in pool.submit(calls)]
    assert statuses == ["ok"] * 10 + ["timeout"] + ["ok"] * 30
    assert pool.respawns >= 1


def test_answers_arrive_in_order_for_every_call(pool, registry):
    calls = [sleepy(registry, "0") for _ in range(100)]
    results = [future.result(timeout=60) for future in pool.submit(calls)]
    assert all(len(r) == 1 and r[0].status == "ok" for r in results)
    assert pool.pending() == 0


def test_start_up_does_not_count_against_a_calls_limit(registry):
    pool = WorkerPool("cold", 1, plugin_files=registry.plugin_files, memory_mb=1024)
    pool.start(wait_s=0)  # do not wait for the worker: submit while it is still loading
    try:
        [future] = pool.submit([sleepy(registry, "0", timeout_s=0.05)])
        assert future.result(timeout=60)[0].status == "ok"
    finally:
        pool.shutdown()


def test_a_worker_killed_from_outside_costs_its_call_a_retry_not_its_result(pool, registry):
    [future] = pool.submit([sleepy(registry, "1.5", timeout_s=10.0)])
    time.sleep(0.5)  # the call is running in the pool's only worker
    os.kill(pool._workers[0].process.pid, signal.SIGKILL)  # an operator's kill -9, the OOM killer
    [result] = future.result(timeout=60)
    assert (result.status, result.score) == ("ok", 1.0)


def test_a_call_that_kills_its_worker_twice_is_reported_as_poison(pool, registry):
    config = registry.validate_config("test_crash", {})
    [future] = pool.submit([Call("test_crash", config, (Sample(response="crash"),), "rule", 5.0)])
    [result] = future.result(timeout=60)
    assert result.status == "error" and "worker process died while scoring" in (result.error or "")
    assert "2 times" in (result.error or "")


def test_a_worker_holding_its_next_chunk_blames_the_right_call_in_either_chunk(pool, registry):
    # 60 calls on one worker leave as several chunks, the next one sent before the current one
    # ends. The overrunning calls sit in different chunks; positions count across chunks, so
    # each one is blamed alone and every call queued behind it is still answered.
    calls = [sleepy(registry, "0")] * 20 + [sleepy(registry, "60")] + [sleepy(registry, "0")] * 25
    calls += [sleepy(registry, "60")] + [sleepy(registry, "0")] * 13
    respawns = pool.respawns
    statuses = [future.result(timeout=60)[0].status for future in pool.submit(calls)]
    assert statuses == ["ok"] * 20 + ["timeout"] + ["ok"] * 25 + ["timeout"] + ["ok"] * 13
    assert pool.respawns == respawns + 2
    assert pool.pending() == 0


def test_answers_go_to_each_submissions_sink_in_batches(pool, registry):
    import threading

    received: dict[str, list[int]] = {"a": [], "b": []}
    calls_made: dict[str, int] = {"a": 0, "b": 0}
    done = threading.Event()

    def sink_for(name: str):
        def sink(pairs):
            calls_made[name] += 1
            received[name] += [index for index, results in pairs if results[0].status == "ok"]
            if len(received["a"]) == 50 and len(received["b"]) == 30:
                done.set()

        return sink

    pool.submit_to([([sleepy(registry, "0")] * 50, sink_for("a")), ([sleepy(registry, "0")] * 30, sink_for("b"))])
    assert done.wait(60)
    assert received == {"a": list(range(50)), "b": list(range(30))}
    assert calls_made["a"] < 50 and calls_made["b"] < 30  # batched hand-offs, not one per call


def test_a_pool_started_in_a_process_holding_thousands_of_sockets_still_answers_and_replaces(registry):
    # An API process under OpenRLHF's load holds a socket per request: a worker started (or
    # replaced) then gets a pipe numbered above 1023, which select() cannot watch.
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    pool = WorkerPool("crowded", 1, plugin_files=registry.plugin_files, memory_mb=1024)
    try:
        pool.start()
        assert pool._workers[0].conn.fileno() > 1023
        statuses = [f.result(timeout=60)[0].status for f in pool.submit([sleepy(registry, "0")] * 5)]
        assert statuses == ["ok"] * 5
        os.kill(pool._workers[0].process.pid, signal.SIGKILL)  # the replacement's pipe is crowded too
        [again] = pool.submit([sleepy(registry, "0")])
        assert again.result(timeout=60)[0].status == "ok"
    finally:
        pool.shutdown()
        for fd in held:
            os.close(fd)
