"""The code pool starts with the service, not with its first code request.

A fresh service's first code batch used to wait for the code workers to start (their fork,
registry, imports) and then for each worker's first sandbox; now ``LocalExecutor.start`` starts
them in the background once the CPU pool is up, and each code worker runs
:meth:`~rewardhub.verifier.Verifier.warm_worker` (the code verifier's warm sandbox) before it
takes calls. ``code_workers_at_start: false`` keeps the old behaviour.
"""

from __future__ import annotations

import asyncio
import os
import textwrap
import time
from pathlib import Path

from rewardhub.execution import local
from rewardhub.execution.local import LocalExecutor
from rewardhub.registry import Registry
from rewardhub.settings import Settings

WARM_PROBE = textwrap.dedent(
    """
    import os
    from rewardhub.types import Result
    from rewardhub.verifier import Verifier

    MARKS = {marks!r}

    class WarmProbe(Verifier):
        name = "code_warm_probe"
        kind = "code"

        @classmethod
        def warm_worker(cls):
            with open(MARKS, "a") as handle:
                handle.write(f"{{os.getpid()}}\\n")

        def score(self, sample, config):
            return Result.ok(1.0)
    """
)


def _executor(tmp_path: Path, monkeypatch, **settings: object) -> tuple[LocalExecutor, Path]:
    """An executor whose CPU pool never starts (only the code pool's start is in question) and whose
    fork server imports nothing ahead (its warm-up is tests/execution/test_warm_up.py's subject)."""
    monkeypatch.setattr(local, "fork_server_modules", lambda registry: [])
    marks = tmp_path / "warmed"
    plugin = tmp_path / "warm_probe.py"
    # the file's path is in the plugin's source, not in the environment: a fork server this process
    # started for an earlier test keeps the environment it had then, and code workers fork from it
    plugin.write_text(WARM_PROBE.format(marks=str(marks)))
    monkeypatch.setenv("REWARDHUB_SANDBOX_PRELOAD", "json")  # the code verifier's own warm sandbox: a light one
    registry = Registry.load([str(plugin)])
    executor = LocalExecutor(Settings(workers=1, code_workers=1, **settings), registry)
    monkeypatch.setattr(executor.cpu_pool, "start", lambda: None)
    monkeypatch.setattr(executor.cpu_pool, "shutdown", lambda: None)
    return executor, marks


def test_start_starts_the_code_workers_and_each_warms_before_any_request(tmp_path, monkeypatch) -> None:
    executor, marks = _executor(tmp_path, monkeypatch)

    async def scenario() -> list[int]:
        await executor.start()
        deadline = time.monotonic() + 60
        while not (marks.exists() and executor.code_pool.ready_workers() == 1) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        pids = [process.pid for process in (w.process for w in executor.code_pool._workers)]
        await executor.close()
        return pids

    pids = asyncio.run(scenario())
    assert [int(line) for line in marks.read_text().split()] == pids  # warmed in the code worker, once
    assert pids[0] != os.getpid()


def test_with_code_workers_at_start_off_the_first_code_call_starts_them(tmp_path, monkeypatch) -> None:
    executor, marks = _executor(tmp_path, monkeypatch, code_workers_at_start=False)
    asyncio.run(executor.start())
    assert not executor.code_pool.started and not marks.exists()
