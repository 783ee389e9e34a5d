"""data.weak_tasks: the problems an audit found weak are dropped, or drawn with a lower weight."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rewardhub.trainer.config import DataConfig, load_config
from rewardhub.trainer.data import DataError, PromptStream, load_records


def write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def train(tmp_path: Path) -> str:
    return write(tmp_path / "train.jsonl", [{"id": f"p{i}", "prompt": f"q{i}", "reference": {}} for i in range(10)])


@pytest.fixture
def report(tmp_path: Path) -> str:
    # the shape `rewardhub audit code --mutants ... --report` writes
    lines = [{"id": "p2", "mutants_accepted": 1, "mutants_tried": 9, "accepted": [{"kind": "cmp", "diff": "..."}]}]
    return write(tmp_path / "weak.jsonl", [*lines, {"id": "p7", "mutants_accepted": 3, "mutants_tried": 24}])


def test_weak_tasks_are_dropped_from_training_by_default(train: str, report: str) -> None:
    records = load_records(DataConfig(train=train, weak_tasks=report), "train")
    assert [r.id for r in records] == [f"p{i}" for i in range(10) if i not in (2, 7)]
    assert len(load_records(DataConfig(train=train), "train")) == 10  # without the option, all of them


def test_held_out_prompts_are_left_as_they_are(train: str, report: str) -> None:
    records = load_records(DataConfig(train=train, eval=train, weak_tasks=report), "eval")
    assert len(records) == 10


def test_a_weight_draws_each_weak_task_that_often_and_the_others_every_epoch(train: str, report: str) -> None:
    records = load_records(DataConfig(train=train, weak_tasks=report, weak_tasks_weight=0.25), "train")
    assert {r.id: r.weight for r in records if r.weight != 1.0} == {"p2": 0.25, "p7": 0.25}
    stream = PromptStream(records, seed=0)
    epochs = 400
    drawn = Counter(record.id for _ in range(epochs) for record in stream.take(_epoch_size(stream)))
    assert all(drawn[f"p{i}"] == epochs for i in range(10) if i not in (2, 7))
    for weak in ("p2", "p7"):
        assert 0.15 * epochs < drawn[weak] < 0.35 * epochs


def _epoch_size(stream: PromptStream) -> int:
    """The records the stream's next epoch holds (a weighted epoch is shorter than the data)."""
    return len(stream._order(stream.position.epoch)) - stream.position.offset


def test_a_weighted_stream_resumes_where_it_stopped(train: str, report: str) -> None:
    records = load_records(DataConfig(train=train, weak_tasks=report, weak_tasks_weight=0.5), "train")
    whole = PromptStream(records, seed=3).take(60)
    first = PromptStream(records, seed=3)
    head = first.take(23)
    resumed = PromptStream(records, seed=3)
    resumed.position = first.position
    assert [r.id for r in head + resumed.take(37)] == [r.id for r in whole]


def test_records_without_ids_cannot_be_matched(tmp_path: Path, report: str) -> None:
    train = write(tmp_path / "t.jsonl", [{"prompt": "q", "reference": {}}])
    with pytest.raises(DataError, match="matches records by id"):
        load_records(DataConfig(train=train, weak_tasks=report), "train")
    bad = write(tmp_path / "bad.jsonl", [{"mutants_accepted": 1}])
    with pytest.raises(DataError, match="needs an 'id'"):
        load_records(DataConfig(train=train, weak_tasks=bad), "train")


def test_the_weight_is_a_probability_and_the_report_path_resolves_beside_the_yaml(tmp_path: Path, report: str) -> None:
    with pytest.raises(ValueError):
        DataConfig(train="t.jsonl", weak_tasks=report, weak_tasks_weight=1.5)
    write(tmp_path / "train.jsonl", [{"id": "p2", "prompt": "q", "reference": {}}])
    (tmp_path / "run.yaml").write_text("data:\n  train: train.jsonl\n  weak_tasks: weak.jsonl\n")
    cfg = load_config(str(tmp_path / "run.yaml"))
    assert cfg.data.weak_tasks == str(tmp_path / "weak.jsonl")
