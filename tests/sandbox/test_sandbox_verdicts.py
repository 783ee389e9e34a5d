"""From what the parent saw to a verdict: causes come before the signal a run died of."""

from __future__ import annotations

import signal

import pytest

from rewardhub.sandbox import Limits
from rewardhub.sandbox.streams import Pumped
from rewardhub.sandbox.verdicts import RunResult, judge, judge_batched

LIMITS = Limits(timeout_s=2.0)


def killed_by(number: int) -> int:
    return number  # a wait status for "terminated by signal number"


def exited_with(code: int) -> int:
    return code << 8


def seen(
    status: int | None = 0, stdout: bytes = b"", stderr: bytes = b"", record: bytes = b"", cpu_s: float = 0.01, **flags
) -> Pumped:
    exited = None if status is None else {"op": "exited", "status": status, "cpu_s": cpu_s, "maxrss_kb": 1000}
    streams = {"stdout": bytearray(stdout), "stderr": bytearray(stderr), "record": bytearray(record)}
    return Pumped(streams=streams, exited=exited, elapsed_s=0.1, **flags)


def verdict(pumped: Pumped, oom=(0, 0)) -> str:
    return judge(pumped, LIMITS, oom, {"backend": "test"}).verdict


@pytest.mark.parametrize(
    ("pumped", "oom", "expected"),
    [
        (seen(exited_with(0)), (0, 0), "ok"),
        (seen(exited_with(1)), (0, 0), "runtime_error"),
        (seen(killed_by(signal.SIGSEGV)), (0, 0), "runtime_error"),
        (seen(killed_by(signal.SIGKILL)), (0, 1), "memory"),
        (seen(killed_by(signal.SIGKILL)), (None, None), "runtime_error"),
        (seen(exited_with(1), stderr=b"Traceback...\nMemoryError\n"), (None, None), "memory"),
        (
            seen(killed_by(signal.SIGABRT), stderr=b"terminate called after throwing an instance of 'std::bad_alloc'"),
            (0, 0),
            "memory",
        ),
        (seen(killed_by(signal.SIGXCPU)), (0, 0), "timeout"),
        (seen(killed_by(signal.SIGKILL), cpu_s=3.5), (0, 0), "timeout"),
        (seen(killed_by(signal.SIGKILL), timed_out=True), (0, 1), "timeout"),
        (seen(killed_by(signal.SIGKILL), output_limited=True, timed_out=True), (0, 0), "output_limit"),
        (seen(None, server_lost=True), (0, 0), "sandbox_error"),
        (seen(exited_with(3), record=b'{"compile_error": "SyntaxError"}\n'), (0, 0), "compile_error"),
    ],
)
def test_verdict_table(pumped, oom, expected):
    assert verdict(pumped, oom) == expected


BATCH_RUN = RunResult("ok", 0, "", "", 100.0)
BATCH_RUN_AT_ITS_MEMORY_LIMIT = RunResult("memory", None, "", "", 100.0)


@pytest.mark.parametrize(
    ("entry", "run", "expected"),
    [
        ({"status": exited_with(0)}, BATCH_RUN, "ok"),
        ({"status": exited_with(1)}, BATCH_RUN, "runtime_error"),
        ({"status": exited_with(1), "stderr": "Traceback...\nMemoryError\n"}, BATCH_RUN, "memory"),
        ({"status": killed_by(signal.SIGKILL), "killed": "timeout"}, BATCH_RUN, "timeout"),
        ({"status": killed_by(signal.SIGKILL), "killed": "output_limit"}, BATCH_RUN, "output_limit"),
        ({"status": killed_by(signal.SIGXCPU)}, BATCH_RUN, "timeout"),
        ({"status": killed_by(signal.SIGKILL)}, BATCH_RUN, "runtime_error"),
        ({"status": killed_by(signal.SIGKILL)}, BATCH_RUN_AT_ITS_MEMORY_LIMIT, "memory"),
        ("not a report", BATCH_RUN, "sandbox_error"),
    ],
)
def test_a_batched_test_gets_the_verdict_its_own_run_would_have(entry, run, expected):
    """The coordinator inside reports each test's wait status and why it killed it; the verdict
    follows the same order of causes as a run's (the memory cgroup's kill is seen on the batch's run)."""
    assert judge_batched(entry, run).verdict == expected


def test_a_batched_test_keeps_its_signal_record_and_retirement():
    entry = {"status": killed_by(signal.SIGSEGV), "record": {"value": 1}, "retired": "threads", "elapsed_ms": 3}
    result = judge_batched(entry, BATCH_RUN)
    assert (result.exit_code, result.record, result.elapsed_ms) == (None, {"value": 1}, 3.0)
    assert result.details == {"batched": True, "process_retired": "threads", "signal": "SIGSEGV"}


def test_a_run_that_timed_out_with_its_memory_at_the_limit_is_a_memory_verdict():
    """At a cgroup's limit the kernel reclaims the program's own code pages before it kills, and
    a memory hog can stall there until its time runs out: that is a memory verdict."""
    limit_kb = LIMITS.memory_mb * 1024

    def at_timeout(maxrss_kb: int | None) -> str:
        pumped = seen(killed_by(signal.SIGKILL), timed_out=True)
        pumped.exited["maxrss_kb"] = maxrss_kb  # type: ignore[index]
        return verdict(pumped)

    assert at_timeout(limit_kb) == "memory"
    assert at_timeout(int(limit_kb * 0.95)) == "memory"
    assert at_timeout(limit_kb // 2) == "timeout"  # an endless loop with memory to spare
    assert at_timeout(None) == "timeout"
    finished = seen(exited_with(0))
    finished.exited["maxrss_kb"] = limit_kb  # type: ignore[index]
    assert verdict(finished) == "ok"  # using its memory and finishing in time is fine


def test_a_timeout_is_not_a_sandbox_error_even_if_the_server_never_reported():
    assert verdict(seen(None, timed_out=True, server_lost=True)) == "timeout"


def test_a_signal_is_reported_by_name_and_the_exit_code_is_none():
    result = judge(seen(killed_by(signal.SIGSEGV)), LIMITS, (0, 0), {})
    assert (result.exit_code, result.details["signal"]) == (None, "SIGSEGV")


def test_two_result_records_are_no_record_at_all():
    result = judge(seen(exited_with(0), record=b'{"value": 1}\n{"value": 2}\n'), LIMITS, (0, 0), {})
    assert result.record is None
    assert "2 result records" in result.details["record_problem"]


def test_output_is_cut_at_the_cap():
    result = judge(seen(exited_with(0), stdout=b"x" * 100), Limits(max_output_bytes=10), (0, 0), {})
    assert result.stdout == "x" * 10


# --- the deadline does not depend on who wakes first ---------------------------------------------


class _LatePoll:
    """A poll whose caller is descheduled for ``late_s`` before it looks: a loaded host."""

    def __init__(self, late_s: float) -> None:
        import select

        self.inner, self.late_s = select.poll(), late_s

    def register(self, *args) -> None:
        self.inner.register(*args)

    def unregister(self, fd) -> None:
        self.inner.unregister(fd)

    def poll(self, timeout_ms):
        import time

        time.sleep(self.late_s)
        return self.inner.poll(0)


@pytest.mark.parametrize(("late_s", "timed_out"), [(0.0, False), (0.3, True)], ids=["on time", "late"])
def test_a_run_whose_exit_is_learned_past_its_deadline_is_a_timeout(monkeypatch, late_s, timed_out) -> None:
    # SandboxFusion's Go case sleeps 200 ms under a 190 ms limit: whether the parent's deadline or the
    # exit report is seen first must not decide the verdict
    import select
    import socket
    from types import SimpleNamespace

    from rewardhub.sandbox import streams
    from rewardhub.sandbox.inside import wire

    parent, server = socket.socketpair()
    wire.send_message(server, {"op": "exited", "status": 0, "cpu_s": 0.0, "maxrss_kb": 1000})
    late = SimpleNamespace(poll=lambda: _LatePoll(late_s), POLLIN=select.POLLIN, POLLOUT=select.POLLOUT)
    monkeypatch.setattr(streams, "select", late)
    try:
        pumped = streams.pump(parent, {}, {}, timeout_s=0.1, caps={}, kill=lambda: None)
    finally:
        parent.close()
        server.close()
    assert pumped.exited is not None and pumped.timed_out is timed_out
    assert judge(pumped, Limits(timeout_s=0.1), (None, None), {}).verdict == ("timeout" if timed_out else "ok")
