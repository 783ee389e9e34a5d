"""A checker's run to a verdict (a pure function): 0, 1 and 2 judge; everything else is no judgement."""

from __future__ import annotations

import pytest

from rewardhub.sandbox import CheckerFailed, RunResult
from rewardhub.verifiers.code.checkers import include_files, judge_checker_run


def run(verdict: str, exit_code: int | None, record=None, **details) -> RunResult:
    return RunResult(verdict, exit_code, "", "checker said so", 1.0, record, details)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        (run("ok", 0), "passed"),
        (run("runtime_error", 1), "wrong_answer"),
        (run("runtime_error", 2), "presentation_error"),
    ],
)
def test_exit_statuses_zero_one_and_two_are_the_judgements(result, verdict):
    assert judge_checker_run(result) == verdict


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (run("runtime_error", 3), "status 3"),
        (run("runtime_error", 7), "status 7"),
        (run("runtime_error", None, signal="SIGSEGV"), "SIGSEGV"),
        (run("timeout", None, signal="SIGKILL"), "ran out of time"),
        (run("memory", None), "ran out of memory"),
        (run("output_limit", None), "wrote too much"),
        (run("sandbox_error", None, message="server gone"), "server gone"),
        (run("runtime_error", 1, {"crashed": "ZeroDivisionError: division by zero"}), "crashed: ZeroDivisionError"),
    ],
)
def test_anything_else_is_no_judgement(result, message):
    with pytest.raises(CheckerFailed, match=message):
        judge_checker_run(result)


def test_include_dir_gives_its_headers_only(tmp_path):
    (tmp_path / "testlib.h").write_text("// testlib")
    (tmp_path / "notes.txt").write_text("not a header")
    assert include_files(str(tmp_path)) == {"testlib.h": "// testlib"}
    assert include_files(None) == {}
    with pytest.raises(CheckerFailed, match="not a folder"):
        include_files(str(tmp_path / "missing"))
