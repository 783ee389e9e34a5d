"""Re-verification: what counts as a flip, which class it is filed under, and the files it reads.

The arithmetic is checked on hand-built verdicts; the command runs end to end in process on the
built-in ``exact`` verifier, whose ``case_sensitive`` switch flips known samples.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rewardhub.audit.reverify import flip_of, run_reverify, verdict_diff
from rewardhub.audit.reverify_report import plot_reverify, text_reverify
from rewardhub.audit.stored import Stored, read_stored, stored_from_json
from rewardhub.calls import Call, run_call
from rewardhub.cli import main
from rewardhub.errors import InvalidRequest
from rewardhub.execution.base import Executor
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierRef
from rewardhub.verifiers.exact import ExactVerifier


class Counting(Executor):
    async def run(self, calls: list[Call], on_progress: object = None) -> list[list[Result]]:  # type: ignore[override]
        return [run_call(self.registry, call) for call in calls]

    def __init__(self, registry: Registry) -> None:
        self.registry = registry


KEY_V1 = {"verifier": "m", "version": "1", "config_hash": "aaaa"}
KEY_V2 = {"verifier": "m", "version": "2", "config_hash": "aaaa"}


def ok(score: float, key: dict = KEY_V1, **details: object) -> Result:
    return Result(score=score, details={"verdict_key": key, **details})


def error(message: str = "boom", key: dict = KEY_V1, **details: object) -> Result:
    return Result(score=0.0, status="error", error=message, details={"verdict_key": key, **details})


@pytest.mark.parametrize(
    ("old", "new", "flip"),
    [
        (ok(0.0), ok(1.0), "0->1"),
        (ok(1.0), ok(0.0), "1->0"),
        (ok(1.0), error(), "ok->error"),
        (ok(0.0), error(), "ok->error"),
        (error(), ok(0.0), "error->ok"),
        (ok(0.4), ok(0.6), None),  # the score moved, the verdict did not
        (error("a"), error("b"), None),
        (ok(1.0), ok(1.0), None),
    ],
)
def test_flips(old: Result, new: Result, flip: str | None) -> None:
    assert flip_of(old, new, threshold=1.0) == flip


def test_the_report_counts_flips_per_class_and_lists_flips_first() -> None:
    stored = [Stored(Sample(id=str(i), response=f"r{i}"), None, f"f:{i}") for i in range(6)]
    old = [ok(0.0, reason="not_equivalent"), ok(0.0, reason="not_equivalent"), ok(1.0), ok(1.0), error(), ok(0.2)]
    new = [
        ok(1.0, KEY_V2),
        ok(1.0, KEY_V2),
        ok(0.0, KEY_V2, reason="no_answer"),
        ok(1.0, KEY_V2),
        ok(0.0, KEY_V2, reason="no_answer"),
        ok(0.3, KEY_V2),
    ]
    report = verdict_diff("m", "stored", stored, old, new)
    assert report["flips"] == {"0->1": 2, "1->0": 1, "ok->error": 0, "error->ok": 1}
    assert report["by_class"] == {
        "not_equivalent": {"0->1": 2},  # why they failed then
        "error": {"error->ok": 1},  # an error without a reason is filed under its status
        "no_answer": {"1->0": 1},  # why it fails now
    }
    assert [e["id"] for e in report["changed"]] == ["0", "1", "2", "4", "5"]  # by flip kind, the moved score last
    assert report["changed"][-1]["flip"] is None and report["score_changed"] == 1
    assert report["same_key_flips"] == 0
    assert report["verdict_keys"]["new"] == [{"verifier": "m", "version": "2", "config_hash": "aaaa", "n": 6}]


def test_a_flip_under_the_same_verdict_key_is_called_out() -> None:
    stored = [Stored(Sample(response="x"), None, "f:1")]
    report = verdict_diff("m", "stored", stored, [ok(1.0)], [ok(0.0)])
    assert report["same_key_flips"] == 1


def test_every_file_shape_reads_into_a_sample_and_its_old_verdict(tmp_path: Path) -> None:
    result = {"score": 1.0, "status": "ok", "details": {"verdict_key": KEY_V1}}
    dump_row = {
        "step": 3,
        "index": 7,
        "group": "g",
        "prompt": "p",
        "reference": "4",
        "response": "4",
        "response_ids": [1, 2],
        "reward_score": 0.0,
        "reward_status": "error",
        "reward_error": "bad",
        "reward_details": {"verdict_key": KEY_V1},
        "reward_steps": None,
        "reward_verifier": "math",
        "in_loss": False,
    }
    page_entry = {"key": "k", "sample": {"id": "u", "response": "4", "verifier": "math"}, "result": result}
    with_result = {"id": "s", "response": "4", "reference": "4", "result": result, "source": "x"}
    lines = [with_result, dump_row, page_entry, {"id": "bare", "response": "4"}]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    one, dump, page, bare = read_stored(path)
    assert one.old is not None and one.old.score == 1.0 and one.sample.metadata == {"source": "x"}
    assert dump.sample.id == "step3-7" and dump.sample.group == "g" and dump.sample.prompt == "p"
    assert dump.old is not None and dump.old.status == "error" and dump.old.details["verdict_key"] == KEY_V1
    assert page.sample.id == "u" and page.sample.verifier is None and page.old is not None
    assert bare.old is None and bare.where.endswith(":4")


def test_rewardhub_score_output_is_joined_to_its_samples_by_id(tmp_path: Path) -> None:
    samples, scored = tmp_path / "in.jsonl", tmp_path / "in.scored.jsonl"
    samples.write_text('{"response": "a", "reference": "a"}\n{"id": "x", "response": "b", "reference": "c"}\n')
    scored.write_text('{"id": "x", "score": 0.0, "status": "ok"}\n{"id": "1", "score": 1.0, "status": "ok"}\n')
    first, second = read_stored(scored, samples)
    assert (first.sample.response, first.old.score) == ("b", 0.0)  # type: ignore[union-attr]
    assert (second.sample.response, second.old.score) == ("a", 1.0)  # type: ignore[union-attr]
    with pytest.raises(InvalidRequest, match="--samples"):
        read_stored(scored)


def test_a_bad_line_names_itself() -> None:
    with pytest.raises(InvalidRequest, match=r"f:9: .*response"):
        stored_from_json({"result": {"score": 1}}, "f:9")


CASES = [("Paris", "paris"), ("paris", "paris"), ("Lyon", "paris"), ("PARIS", "Paris")]


def _stored_file(tmp_path: Path) -> Path:
    """Samples scored by exact with case_sensitive: true (verdicts written by hand: 1 only for equal text)."""
    lines = []
    for i, (response, reference) in enumerate(CASES):
        score = float(response == reference)
        key = {"verifier": "exact", "version": "1", "config_hash": "old"}
        result = {"score": score, "status": "ok", "details": {"verdict_key": key}}
        lines.append({"id": f"c{i}", "response": response, "reference": reference, "result": result})
    path = tmp_path / "stored.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_the_command_prints_the_diff_and_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], service_url: str
) -> None:
    """End to end through a running service (the suite's shared one: a process pool of its own costs ~20 s here)."""
    path = _stored_file(tmp_path)
    code = main(["reverify", str(path), "--verifier", "exact", "--url", service_url, "--json", "--fail-on-flip"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # a flip, and --fail-on-flip
    assert report["n"] == 4 and report["against"] == "stored"
    assert report["flips"] == {"0->1": 2, "1->0": 0, "ok->error": 0, "error->ok": 0}
    assert [e["id"] for e in report["changed"]] == ["c0", "c3"]
    assert report["verdict_keys"]["new"][0]["verifier"] == "exact"
    text = text_reverify(report)
    assert "0->1 2" in text and "c0 0->1" in text


def test_the_command_wants_an_old_side_before_it_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_text("\n".join(json.dumps({"response": r, "reference": g}) for r, g in CASES) + "\n")
    assert main(["reverify", str(path), "--verifier", "exact"]) == 2
    assert "against" in capsys.readouterr().err


def test_against_scores_the_old_side_through_the_same_path() -> None:
    registry = Registry([ExactVerifier])
    scorer = Scorer(registry, Counting(registry), Settings())

    async def score(samples: list[Sample], spec: object) -> list[Result]:
        return await scorer.score(samples, spec, cache=False)  # type: ignore[arg-type]

    stored = [Stored(Sample(response=r, reference=g), None, f"f:{i}") for i, (r, g) in enumerate(CASES)]
    against = VerifierRef(name="exact", config={"case_sensitive": True})
    report = asyncio.run(run_reverify(score, "exact", stored, against))
    assert report["flips"]["0->1"] == 2 and report["same_key_flips"] == 0
    assert report["against"] == {"name": "exact", "config": {"case_sensitive": True}}


def test_the_plot_is_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    stored = [Stored(Sample(response="x"), None, "f:1")]
    report = verdict_diff("m", "stored", stored, [ok(0.0, reason="no_answer")], [ok(1.0)])
    out = tmp_path / "flips.png"
    plot_reverify(report, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
