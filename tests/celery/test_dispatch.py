"""The dispatcher's rules, one at a time, on the real Redis and Celery's own result backend.

No worker runs here: the test plays the worker's part by writing what a worker writes (its
liveness key, its claim on a delivery, a result through Celery's backend), so each rule is
shown without waiting for a process to die.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from celery import states
from celery_support import celery_settings
from test_faults import delete_queues

from rewardhub.execution.celery_app import TimeLimits, create_celery_app
from rewardhub.execution.celery_dispatch import Dispatch, Dispatcher, Lost, Outcome
from rewardhub.execution.celery_liveness import SKIP_ORIGIN_GONE, SKIP_SETTLED, SKIP_SUPERSEDED, liveness_for
from rewardhub.execution.celery_tasks import ChunkOutcome

PAYLOAD = {"calls": [{"verifier": "exact", "samples": [{"response": "x"}], "kind": "rule", "timeout_s": 1.0}]}


@pytest.fixture
def dispatcher(redis_up: None) -> Iterator[Dispatcher]:
    settings = celery_settings(f"disp{uuid.uuid4().hex[:6]}", heartbeat_s=0.2, lost_after_s=1.0)
    app = create_celery_app(settings)
    dispatcher = Dispatcher(app, liveness_for(app), "api-under-test", settings.heartbeat_s, [])
    dispatcher.start()
    yield dispatcher
    dispatcher.stop()
    delete_queues(settings)
    app.close()


def wait_for(condition: Callable[[], object], timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def send(dispatcher: Dispatcher, payload: dict = PAYLOAD) -> tuple[str, list[Outcome]]:
    outcomes: list[Outcome] = []
    chunk_id = uuid.uuid4().hex
    dispatcher.send(Dispatch(chunk_id, payload, TimeLimits(3.0, 5.0), 1, outcomes.append))
    wait_for(lambda: dispatcher._chunks.get(chunk_id) and dispatcher._chunks[chunk_id].open)
    return chunk_id, outcomes


def deliveries(dispatcher: Dispatcher, chunk_id: str) -> list[str]:
    tracked = dispatcher._chunks.get(chunk_id)
    return sorted(tracked.open) if tracked else []


def answer(dispatcher: Dispatcher, task_id: str, worker: str, skipped: str | None = None) -> None:
    """What a worker stores when it finishes a delivery."""
    outcome = ChunkOutcome(results=[] if skipped else [[]], worker=worker, skipped=skipped)
    dispatcher.app.backend.store_result(task_id, outcome.model_dump(mode="json"), states.SUCCESS)


def test_a_chunk_held_by_a_worker_whose_heartbeat_stopped_is_dispatched_again(dispatcher: Dispatcher) -> None:
    chunk_id, outcomes = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    dispatcher.liveness.beat("worker", "w1@test")
    dispatcher.liveness.claim(first, "w1@test")
    time.sleep(0.5)
    assert deliveries(dispatcher, chunk_id) == [first]  # its holder is alive: nothing happens
    wait_for(lambda: len(deliveries(dispatcher, chunk_id)) == 2)  # w1's key expired after 1 s
    assert dispatcher.stats.redispatched == 1 and outcomes == []


def test_the_first_result_of_a_chunk_wins_and_a_late_duplicate_is_dropped(dispatcher: Dispatcher) -> None:
    chunk_id, outcomes = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    dispatcher.liveness.claim(first, "gone@test")  # a holder with no liveness key at all
    wait_for(lambda: len(deliveries(dispatcher, chunk_id)) == 2)
    [second] = [t for t in deliveries(dispatcher, chunk_id) if t != first]
    answer(dispatcher, second, "w2@test")
    wait_for(lambda: outcomes)
    answer(dispatcher, first, "gone@test")  # the lost worker comes back and answers too
    time.sleep(0.3)
    assert len(outcomes) == 1 and outcomes[0]["result"]["worker"] == "w2@test"
    assert dispatcher.liveness.skip_reason(chunk_id, second, None) == SKIP_SETTLED  # any later delivery skips


def test_a_delivery_that_skipped_its_chunk_is_not_its_answer(dispatcher: Dispatcher) -> None:
    chunk_id, outcomes = send(dispatcher)
    for _ in range(8):  # more than the bound on lost deliveries: a skip is not a loss
        [delivery] = deliveries(dispatcher, chunk_id)
        answer(dispatcher, delivery, "w1@test", skipped=SKIP_ORIGIN_GONE)  # our key was missing
        wait_for(lambda d=delivery: deliveries(dispatcher, chunk_id) not in ([], [d]))
    assert outcomes == [] and dispatcher.stats.redispatched == 8
    assert dispatcher.liveness.alive("api", ["api-under-test"])  # the key was restored before dispatching again


def test_a_delivery_taken_from_its_queue_but_never_claimed_is_dispatched_again(dispatcher: Dispatcher) -> None:
    """A worker killed between popping a message and recording its claim leaves no holder to
    watch. Queues are FIFO: once a later delivery on the same queue is answered, the unclaimed
    earlier one has left the queue too; after ``lost_after_s`` (1 s here) it goes out again."""
    chunk_id, outcomes = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    later_id, later_outcomes = send(dispatcher)
    [later] = deliveries(dispatcher, later_id)
    answer(dispatcher, later, "w1@test")
    wait_for(lambda: later_outcomes)
    time.sleep(0.5)
    assert deliveries(dispatcher, chunk_id) == [first]  # not before lost_after_s
    wait_for(lambda: len(deliveries(dispatcher, chunk_id)) == 2)
    assert outcomes == [] and dispatcher.stats.redispatched == 1


def test_an_unclaimed_delivery_still_in_its_queue_is_left_alone(dispatcher: Dispatcher) -> None:
    """Nothing later on its queue was taken (a backlog, or no worker yet): it is waiting, not lost,
    however long that takes; a delivery taken from another queue says nothing about it."""
    chunk_id, _ = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    code_id, _ = send(dispatcher, {"calls": [{**PAYLOAD["calls"][0], "verifier": "code", "kind": "code"}]})
    [code] = deliveries(dispatcher, code_id)
    dispatcher.liveness.claim(code, "w1@test")
    for _ in range(10):  # 2.5 s: past lost_after_s, several sweeps; w1 stays alive
        dispatcher.liveness.beat("worker", "w1@test")
        time.sleep(0.25)
    assert deliveries(dispatcher, chunk_id) == [first] and dispatcher.stats.redispatched == 0


def test_a_delivery_the_worker_revoked_is_dispatched_again_not_answered_with_an_error(
    dispatcher: Dispatcher,
) -> None:
    """A worker that loses the broker stops its running tasks; Celery may record that as
    ``REVOKED: terminated`` (when the pool reports the killed child before the cancel is noted).
    Nothing was scored, so the chunk goes out again; it is still a loss toward the bound."""
    chunk_id, outcomes = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    dispatcher.app.backend.mark_as_revoked(first, "terminated")
    wait_for(lambda: deliveries(dispatcher, chunk_id) not in ([], [first]))
    assert outcomes == [] and dispatcher.stats.redispatched == 1
    [second] = deliveries(dispatcher, chunk_id)
    answer(dispatcher, second, "w2@test")
    wait_for(lambda: outcomes)
    assert outcomes[0]["status"] == states.SUCCESS and outcomes[0]["result"]["worker"] == "w2@test"


def test_a_chunk_revoked_on_every_delivery_is_given_up_on(dispatcher: Dispatcher) -> None:
    chunk_id, outcomes = send(dispatcher)
    for _ in range(10):
        if outcomes:
            break
        [delivery] = deliveries(dispatcher, chunk_id)
        dispatcher.app.backend.mark_as_revoked(delivery, "terminated")
        wait_for(lambda d=delivery: outcomes or deliveries(dispatcher, chunk_id) not in ([], [d]))
    [lost] = outcomes
    assert isinstance(lost, Lost) and "dispatched 4 times" in lost.message


def test_an_older_delivery_learns_it_was_superseded(dispatcher: Dispatcher) -> None:
    chunk_id, _ = send(dispatcher)
    [first] = deliveries(dispatcher, chunk_id)
    assert dispatcher.liveness.skip_reason(chunk_id, first, None) is None
    dispatcher.liveness.claim(first, "gone@test")
    wait_for(lambda: len(deliveries(dispatcher, chunk_id)) == 2)
    assert dispatcher.liveness.superseded(chunk_id, first)
    assert dispatcher.liveness.skip_reason(chunk_id, first, None) == SKIP_SUPERSEDED


def test_redispatch_is_bounded_like_poison(dispatcher: Dispatcher) -> None:
    chunk_id, outcomes = send(dispatcher)
    for _ in range(10):  # every worker that takes it is lost at once
        if outcomes:
            break
        for task_id in deliveries(dispatcher, chunk_id):
            dispatcher.liveness.claim(task_id, "gone@test")
        time.sleep(0.3)
    wait_for(lambda: outcomes)
    [lost] = outcomes
    assert isinstance(lost, Lost) and "dispatched 4 times" in lost.message  # 1 call + 3
