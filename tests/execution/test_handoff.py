"""Answers cross from the pool's manager thread to the event loop in runs, not one by one.

Under OpenRLHF's load (a thousand one-sample requests at once) one worker message holds the
answers of up to 32 requests; each used to wake the event loop on its own.
"""

from __future__ import annotations

import asyncio
import threading

from rewardhub.execution.local import _Handoff


def test_answers_put_before_the_loop_runs_arrive_in_order_with_one_wake_up() -> None:
    async def main() -> tuple[list[str], int]:
        loop = asyncio.get_running_loop()
        handoff = _Handoff(loop)
        received: list[str] = []
        wake_ups = 0
        original = loop.call_soon_threadsafe

        def counting(*args, **kwargs):  # noqa: ANN002, ANN003
            nonlocal wake_ups
            wake_ups += 1
            return original(*args, **kwargs)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]

        def manager_thread() -> None:
            for name in ("a", "b", "c"):
                handoff.put(received.append, name)

        thread = threading.Thread(target=manager_thread)
        thread.start()
        thread.join()  # all three were put while the loop was not running
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return received, wake_ups

    received, wake_ups = asyncio.run(main())
    assert received == ["a", "b", "c"]
    assert wake_ups == 1


def test_a_put_after_a_drain_wakes_the_loop_again() -> None:
    async def main() -> list[int]:
        handoff = _Handoff(asyncio.get_running_loop())
        received: list[int] = []
        for n in range(3):
            threading.Thread(target=handoff.put, args=(received.append, n)).start()
            for _ in range(50):
                await asyncio.sleep(0.001)
                if len(received) > n:
                    break
        return received

    assert asyncio.run(main()) == [0, 1, 2]


def test_a_closed_loop_drops_answers_instead_of_raising_in_the_manager_thread() -> None:
    loop = asyncio.new_event_loop()
    handoff = _Handoff(loop)
    loop.close()
    handoff.put(lambda _: None, "nobody waits")  # must not raise
    handoff.put(lambda _: None, "nor for this")
