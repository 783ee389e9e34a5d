"""From what the parent saw to a verdict: causes come before the signal a run died of."""

from __future__ import annotations

import signal

import pytest

from rewardhub.sandbox import Limits
from rewardhub.sandbox.streams import Pumped
from rewardhub.sandbox.verdicts import judge

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


@pytest.mark.parametrize(
    ("pumped", "hits", "expected"),
    [
        # time ran out after the memory reached its limit: the kernel was reclaiming its pages
        (seen(killed_by(signal.SIGKILL), timed_out=True), (3, 40), "memory"),
        (seen(killed_by(signal.SIGKILL), timed_out=True), (3, 3), "timeout"),
        (seen(killed_by(signal.SIGKILL), timed_out=True), (None, None), "timeout"),
        # touching the limit and finishing in time is no verdict of its own
        (seen(exited_with(0)), (0, 12), "ok"),
        (seen(killed_by(signal.SIGKILL), output_limited=True, timed_out=True), (0, 9), "output_limit"),
    ],
)
def test_a_run_that_timed_out_at_its_memory_limit_is_a_memory_verdict(pumped, hits, expected):
    result = judge(pumped, LIMITS, (0, 0), {}, hits)
    assert result.verdict == expected
    if expected == "memory":
        assert result.details["memory_limit_hits"] == hits[1] - hits[0]


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
