"""Weak test suites: a problem is flagged when its tests accept a mutant that a fresh input proves wrong.

The pure part is fed results by hand; the end-to-end tests run every program through the service's
``code`` verifier in the real sandbox (skipped, with the reason, where the sandbox cannot start).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from rewardhub.audit.code_tasks import code_task
from rewardhub.audit.mutation import mutants
from rewardhub.audit.weak_tests import fresh_input_tests, mutant_timeout, program_response, summary, task_findings
from rewardhub.cli import main
from rewardhub.types import Result

WEAK_MAX = {
    "id": "weak_max",
    "solution": "def biggest(xs):\n    best = xs[0]\n    for x in xs:\n        if x > best:\n            best = x\n    return best\n",
    # the largest item always comes first: a loop that stops after one pass passes
    "tests": {"assert": "assert biggest([3, 1, 2]) == 3\nassert biggest([5]) == 5"},
}
STRONG_ADD = {
    "id": "strong_add",
    "solution": "def add(a, b):\n    return a + b\n",
    "tests": {
        "assert": "assert add(1, 2) == 3\nassert add(-4, 4) == 0\nassert add(0, 0) == 0\nassert add(10, 5) == 15"
    },
}
STRONG_CLAMP = {
    "id": "strong_clamp",
    "solution": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n",
    "tests": {
        "fn_name": "clamp",
        "inputs": [[5, 0, 10], [-1, 0, 10], [11, 0, 10], [0, 0, 10], [10, 0, 10], [-7, -5, 5]],
        "outputs": [5, 0, 10, 0, 10, -5],
    },
}
PASS, FAIL = Result.ok(1.0), Result.ok(0.0)


def _task_and_mutants(row: dict, count: int = 3):
    task = code_task(row, "test")
    return task, mutants(task.solution, limit=count)


def test_a_survivor_told_apart_on_a_fresh_input_makes_the_problem_weak() -> None:
    task, made = _task_and_mutants(WEAK_MAX)
    audit = task_findings(task, made, PASS, [FAIL, PASS, PASS], PASS, {1: FAIL, 2: PASS}, fresh_inputs=8)
    assert audit.status == "judged" and audit.weak
    assert [m.kind for m in audit.accepted] == [made[1].kind]
    assert [m.kind for m in audit.unconfirmed] == [made[2].kind]  # agrees everywhere: maybe equivalent
    assert audit.report_line() == {
        "id": "weak_max",
        "mutants_accepted": 1,
        "mutants_tried": 3,
        "accepted": [{"kind": made[1].kind, "diff": made[1].diff}],
    }


def test_a_survivor_that_nothing_could_check_is_never_counted_as_weak() -> None:
    task, made = _task_and_mutants(WEAK_MAX)
    no_inputs = task_findings(task, made, PASS, [PASS, PASS, FAIL], None, {}, fresh_inputs=0)
    assert not no_inputs.weak and "no fresh inputs" in no_inputs.note
    unstable = task_findings(task, made, PASS, [PASS, PASS, FAIL], FAIL, {0: FAIL, 1: FAIL}, fresh_inputs=8)
    assert not unstable.weak and "disagrees with itself" in unstable.note
    errored = Result.failed("the sandbox failed", verdict="sandbox_error")
    crashed = task_findings(task, made, PASS, [PASS, errored, FAIL], PASS, {0: errored}, fresh_inputs=8)
    assert not crashed.weak and [m.error for m in crashed.mutants][:2] == ["the sandbox failed"] * 2


def test_a_reference_that_fails_its_own_tests_leaves_the_problem_out() -> None:
    task, made = _task_and_mutants(WEAK_MAX)
    audit = task_findings(task, made, FAIL, [PASS, PASS, PASS], PASS, {0: FAIL}, fresh_inputs=8)
    assert (audit.status, audit.weak) == ("reference_fails", False)
    rows = summary([audit, task_findings(task, made, PASS, [PASS, FAIL, FAIL], PASS, {0: FAIL}, 8)])
    assert (rows["problems"], rows["judged"], rows["weak"], rows["left_out"]) == (2, 1, 1, {"reference_fails": 1})


def test_the_fresh_input_check_compares_with_the_reference_in_the_same_run() -> None:
    task = code_task(STRONG_ADD, "test")
    check = fresh_input_tests(task, [[2, 9], [0, -1]])
    assert check["entry_point"] == "add"
    assert "[[2, 9], [0, -1]]" in check["test"] and repr(task.solution) in check["test"]
    assert program_response("x = 1\n") == "```python\nx = 1\n```\n"


def test_a_mutants_clock_is_ten_times_its_references_slowest_test_within_bounds() -> None:
    reference = Result.ok(1.0, tests=[{"elapsed_ms": 3.0}, {"elapsed_ms": 40.0}])
    assert mutant_timeout(reference, ceiling_s=6.0) == 0.4
    assert mutant_timeout(Result.ok(1.0, tests=[{"elapsed_ms": 1.0}]), ceiling_s=6.0) == 0.1  # the floor
    assert mutant_timeout(reference, ceiling_s=6.0, calls=64) == 6.0  # never past the ceiling
    assert mutant_timeout(reference, ceiling_s=60.0, calls=64) == 25.6


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--kinds", "cmp,nope"], "no mutation kind nope"),
        (["--max-mutants", "0"], "--max-mutants"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(
    tiny_dataset: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert main(["audit", "code", "--mutants", str(tiny_dataset), *args]) == 2
    assert says in capsys.readouterr().err
    assert main(["audit", "math", "--mutants", str(tiny_dataset)]) == 2
    assert "the verifier must be code" in capsys.readouterr().err


# ---- end to end, every program in the sandbox ---------------------------------------------------


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in (WEAK_MAX, STRONG_ADD, STRONG_CLAMP)))
    return path


def _sandbox_or_skip(http: httpx.Client) -> None:
    reply = http.post(
        "/v1/score",
        json={
            "verifier": "code",
            "samples": [{"response": program_response("print(1)"), "reference": {"inputs": [""], "outputs": ["1"]}}],
        },
    )
    result = reply.json()["results"][0]
    if result["status"] != "ok":
        pytest.skip(f"the sandbox cannot run programs here: {result['error']}")


def test_the_weak_suite_is_flagged_through_a_running_service(
    http: httpx.Client, service_url: str, tiny_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sandbox_or_skip(http)
    report = tmp_path / "weak.jsonl"
    args = ["audit", "code", "--mutants", str(tiny_dataset), "--url", service_url, "--report", str(report)]
    code = main([*args, "--json", "--fail-on-exploit"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # a weak problem fails the gate
    assert out["weak_ids"] == ["weak_max"]
    assert out["judged"] == 3 and out["not_judged"] == 0
    audited = {a["id"]: a for a in out["problems_audited"]}
    assert all(m["error"] is None for a in audited.values() for m in a["mutants"])
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["weak_max"]
    assert lines[0]["mutants_accepted"] >= 1
    assert "loop_once" in {m["kind"] for m in lines[0]["accepted"]}
    assert all(m["diff"].startswith("--- reference\n+++ mutant\n") for m in lines[0]["accepted"])


def test_in_process_the_audit_finds_the_same_as_through_the_service(
    http: httpx.Client, service_url: str, tiny_dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sandbox_or_skip(http)
    args = ["audit", "code", "--mutants", str(tiny_dataset), "--max-mutants", "6"]
    assert main([*args, "--workers", "1"]) == 0
    in_process = capsys.readouterr().out
    assert main([*args, "--url", service_url]) == 0
    assert capsys.readouterr().out == in_process  # seeded: the same mutants, inputs and verdicts either way
    assert "weak_max: " in in_process and "strong_add:" not in in_process and "strong_clamp:" not in in_process
    assert "1 accept a broken solution" in in_process
