"""ProcessBench: F1 of earliest-error predictions, in process, over HTTP and from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from rewardhub.models.prm import ProcessRM
from rewardhub.models.processbench import (
    ProcessBenchItem,
    evaluate,
    evaluate_file,
    http_scorer,
    local_scorer,
    main,
    processbench_f1,
)
from rewardhub.types import Result, Sample


def test_f1_by_hand() -> None:
    # erroneous: labels 1, 0, 2 predicted 1, 1, 2 -> 2/3; correct: three -1 predicted -1, -1, 0 -> 2/3
    f1, acc_err, acc_ok = processbench_f1([1, 1, 2, -1, -1, 0], [1, 0, 2, -1, -1, -1])
    assert (acc_err, acc_ok) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert f1 == pytest.approx(2 / 3)
    assert processbench_f1([0, -1], [0, 1])[0] == 0.0  # all correct solutions missing: F1 is 0


def fixed_steps(rewards: dict[str, list[float]]):  # type: ignore[no-untyped-def]
    """A scorer that gives each problem fixed step rewards (one problem fails)."""

    def score(samples: list[Sample]) -> list[Result]:
        out = []
        for s in samples:
            steps = rewards.get(s.prompt_text())
            out.append(Result.failed("boom") if steps is None else Result.ok(min(steps), steps=steps))
        return out

    return score


ITEMS = [
    ProcessBenchItem(problem="a", steps=["s1", "s2"], label=1),
    ProcessBenchItem(problem="b", steps=["s1", "s2"], label=-1),
    ProcessBenchItem(problem="c", steps=["s1", "s2"], label=0),
    ProcessBenchItem(problem="d", steps=["s1"], label=-1),
]


def test_evaluate_uses_the_first_step_below_threshold() -> None:
    scorer = fixed_steps({"a": [0.9, 0.2], "b": [0.9, 0.8], "c": [0.7, 0.1]})  # "d" fails
    report = evaluate(ITEMS, scorer, threshold=0.5, batch_size=3)
    # erroneous: a right (1), c wrong (predicted 1) -> 1/2; correct: b right, d failed -> 1/2
    assert (report.error_accuracy, report.correct_accuracy, report.f1) == (0.5, 0.5, 0.5)
    assert (report.n, report.n_error, report.n_correct, report.n_failed) == (4, 2, 2, 1)


def write(path: Path) -> Path:
    rows = [
        {"id": "x1", "problem": "1+1?", "steps": ["1+1 = 2.", "So 2."], "label": -1, "generator": "g"},
        {"id": "x2", "problem": "2*3?", "steps": ["2*3 = 5.", "So 5."], "label": 0, "final_answer_correct": False},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_evaluate_a_file_with_a_real_prm(tiny_models: dict[str, str], tmp_path: Path) -> None:
    scorer = local_scorer(ProcessRM(), ProcessRM.Config(model=tiny_models["prm"]))
    path = write(tmp_path / "pb.jsonl")
    report = evaluate_file(path, scorer)
    assert (report.n, report.n_error, report.n_correct, report.n_failed) == (2, 1, 1, 0)
    # The tiny PRM's own step rewards, read directly, decide each earliest-error prediction; the
    # file's report must be exactly ProcessBench's F1 of those predictions against the labels.
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    steps = [r.steps for r in scorer([ProcessBenchItem.model_validate(row).sample() for row in rows])]
    assert all(s is not None and len(s) == 2 for s in steps)
    predictions = [next((i for i, p in enumerate(s) if p < 0.5), -1) for s in steps]
    f1, acc_err, acc_ok = processbench_f1(predictions, [row["label"] for row in rows])
    assert (report.f1, report.error_accuracy, report.correct_accuracy) == (f1, acc_err, acc_ok)


def test_through_the_http_contract(tiny_models: dict[str, str], tmp_path: Path) -> None:
    seen: list[dict] = []

    def service(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        samples = [Sample.model_validate(s) for s in body["samples"]]
        results = [Result.ok(0.9, steps=[0.9] * len(s.metadata["steps"])) for s in samples]
        return httpx.Response(200, json={"results": [r.model_dump() for r in results], "elapsed_ms": 1.0})

    scorer = http_scorer("http://service", "prm", {"model": "m"}, transport=httpx.MockTransport(service))
    report = evaluate_file(write(tmp_path / "pb.jsonl"), scorer)
    assert seen[0]["verifier"] == {"name": "prm", "config": {"model": "m"}}
    assert seen[0]["samples"][0]["metadata"]["steps"] == ["1+1 = 2.", "So 2."]
    assert (report.correct_accuracy, report.error_accuracy) == (1.0, 0.0)


def test_command_line_in_process(
    tiny_models: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(write(tmp_path / "pb.jsonl")), "--config", json.dumps({"model": tiny_models["prm"]})]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"f1", "error_accuracy", "correct_accuracy", "n", "n_error", "n_correct", "n_failed"}
    assert report["n"] == 2 and report["n_failed"] == 0
