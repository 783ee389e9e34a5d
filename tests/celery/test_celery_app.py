"""The Celery app is configured so that nothing is lost, from settings alone (no broker needed)."""

from __future__ import annotations

import asyncio
import uuid

import pydantic
import pytest
from celery_support import broker_url, redis_result_url

from rewardhub.calls import Call
from rewardhub.errors import ExecutionError
from rewardhub.execution.celery_app import (
    KindRouter,
    broker_options,
    chunk_time_limits,
    create_celery_app,
    max_task_seconds,
    queue_for_kind,
)
from rewardhub.execution.celery_executor import CeleryExecutor
from rewardhub.execution.celery_tasks import CallPayload, ChunkPayload
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import Sample
from rewardhub.verifier import VerifierConfig

REDIS_URL = "redis://127.0.0.1:6379/0"


def app_for(**overrides: object):  # type: ignore[no-untyped-def]
    return create_celery_app(Settings.load(execution="celery", **overrides))


def test_chunks_are_acknowledged_late_requeued_when_a_worker_dies_and_prefetched_one_at_a_time() -> None:
    conf = app_for(broker_url=REDIS_URL).conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.worker_disable_prefetch  # Redis: no more chunks reserved than free processes


def test_time_limits_stay_under_the_visibility_timeout() -> None:
    settings = Settings.load(execution="celery", broker_url=REDIS_URL + "?visibility_timeout=600")
    conf = create_celery_app(settings).conf
    visibility = conf.broker_transport_options["visibility_timeout"]
    assert visibility == 600
    assert conf.task_soft_time_limit < conf.task_time_limit <= visibility / 2
    limits = chunk_time_limits([10.0] * 8)
    assert limits.soft_s >= 80 and limits.hard_s > limits.soft_s


def test_worker_processes_are_recycled_by_task_count_and_memory() -> None:
    conf = app_for(broker_url=REDIS_URL, worker_memory_mb=2048).conf
    assert conf.worker_max_tasks_per_child > 0
    assert conf.worker_max_memory_per_child == 2048 * 1024  # KiB


def test_results_expire_after_the_retention_time() -> None:
    assert app_for(broker_url=REDIS_URL, result_ttl_s=123).conf.result_expires == 123


def test_queues_per_kind_carry_the_prefix_from_the_broker_url() -> None:
    conf = app_for(broker_url=REDIS_URL + "?queue_prefix=staging-").conf
    assert sorted(q.name for q in conf.task_queues) == ["staging-code", "staging-cpu", "staging-gpu"]
    assert "queue_prefix" not in conf.broker_url  # our options are not passed on to the transport


@pytest.mark.parametrize(
    ("kind", "queue"), [("rule", "cpu"), ("group", "cpu"), ("code", "code"), ("model", "gpu"), ("judge", "gpu")]
)
def test_chunks_are_routed_by_verifier_kind(kind: str, queue: str) -> None:
    assert queue_for_kind(kind) == queue
    payload = {"calls": [{"kind": kind}]}
    assert KindRouter("p-")("rewardhub.score_chunk", [payload], {}, {}) == {"queue": f"p-{queue}"}


def test_rabbitmq_is_supported_with_results_in_redis() -> None:
    settings = Settings.load(
        execution="celery", broker_url="amqp://guest:guest@127.0.0.1:5672//", result_backend=redis_result_url()
    )
    options = broker_options(settings)
    assert options.transport == "amqp"
    assert options.visibility_timeout_s == 1800  # RabbitMQ's consumer_timeout
    assert create_celery_app(settings).conf.broker_url.startswith("amqp://")


def test_rabbitmq_without_a_redis_result_backend_is_refused() -> None:
    with pytest.raises(ExecutionError, match="result_backend"):
        app_for(broker_url="amqp://guest:guest@127.0.0.1:5672//")


def test_a_visibility_timeout_too_short_for_any_chunk_is_refused() -> None:
    with pytest.raises(ExecutionError, match="visibility_timeout"):
        app_for(broker_url=REDIS_URL + "?visibility_timeout=5")


def test_payloads_refuse_unknown_fields() -> None:
    call = {"verifier": "exact", "samples": [{"response": "x"}], "kind": "rule", "timeout_s": 1.0}
    ChunkPayload.model_validate({"calls": [call]})
    with pytest.raises(pydantic.ValidationError):
        ChunkPayload.model_validate({"calls": [call], "priority": 9})
    with pytest.raises(pydantic.ValidationError):
        CallPayload.model_validate({**call, "retries": 3})


def test_a_batch_is_cut_into_chunks_per_queue_of_at_most_chunk_size_calls() -> None:
    settings = Settings.load(execution="celery", broker_url=REDIS_URL, chunk_size=3)
    executor = CeleryExecutor(settings, Registry.load())
    calls = [
        Call("regex", VerifierConfig(), (Sample(response=str(i)),), "code" if i % 4 == 0 else "rule", 1.0)
        for i in range(10)
    ]
    chunks = executor._chunks(calls, list(range(10)))
    assert [chunk.indices for chunk in chunks] == [[0, 4, 8], [1, 2, 3], [5, 6, 7], [9]]  # queues in first-seen order
    assert all(len(chunk.payload["calls"]) <= 3 for chunk in chunks)


def test_a_chunk_is_cut_short_when_its_limits_would_pass_the_visibility_timeout() -> None:
    settings = Settings.load(
        execution="celery", broker_url=REDIS_URL + "?visibility_timeout=100", chunk_size=64, max_timeout_s=20
    )
    executor = CeleryExecutor(settings, Registry.load())
    calls = [Call("regex", VerifierConfig(), (Sample(response="x"),), "rule", 10.0) for _ in range(10)]
    chunks = executor._chunks(calls, list(range(10)))
    assert all(chunk.limits.hard_s <= max_task_seconds(executor.options) for chunk in chunks)
    assert sum(len(chunk.indices) for chunk in chunks) == 10 and len(chunks) > 1


def readiness_after_first_check(settings: Settings) -> list[str]:
    async def run() -> list[str]:
        executor = CeleryExecutor(settings, Registry())
        await executor.start()
        try:
            for _ in range(200):
                reasons = executor.readiness()
                if reasons != ["checking the broker and the workers"]:
                    return reasons
                await asyncio.sleep(0.05)
            return executor.readiness()
        finally:
            await executor.close()

    return asyncio.run(run())


def test_readiness_reports_an_unreachable_broker() -> None:
    settings = Settings.load(execution="celery", broker_url="redis://127.0.0.1:1/0")
    [reason] = readiness_after_first_check(settings)
    assert reason.startswith("broker unreachable at redis://127.0.0.1:1/0")


def test_readiness_reports_that_no_worker_consumes_the_cpu_queue(redis_up: None) -> None:
    settings = Settings.load(execution="celery", broker_url=broker_url(f"idle{uuid.uuid4().hex[:6]}"))
    [reason] = readiness_after_first_check(settings)
    assert reason == "no Celery workers answered" or reason.startswith("no worker consumes queue")
