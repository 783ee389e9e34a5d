"""Resuming is exact: 2 steps, a checkpoint, 2 more steps equal 4 uninterrupted steps."""

import json

import torch
from trainer_helpers import ExactScorer, scorer_factory

from rewardhub.trainer.checkpoint import latest_checkpoint
from rewardhub.trainer.loop import Trainer


def comparable(rows):
    # wall-clock numbers differ between runs, and the shorter run evaluated at its last step (2);
    # everything else must be identical
    skip = ("time/", "perf/", "reward/latency", "eval/")
    return [{k: v for k, v in row.items() if not k.startswith(skip)} for row in rows]


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_two_plus_two_steps_with_a_resume_equal_four_steps(make_config, tmp_path):
    straight = Trainer(
        make_config(steps=4, output_dir=str(tmp_path / "straight")), scorer=scorer_factory(ExactScorer())
    )
    straight.run()

    first = Trainer(make_config(steps=2, output_dir=str(tmp_path / "resumed")), scorer=scorer_factory(ExactScorer()))
    first.run()
    assert latest_checkpoint(tmp_path / "resumed").name == "step_000002"
    second = Trainer(
        make_config(steps=4, output_dir=str(tmp_path / "resumed"), checkpoint={"resume": "auto"}),
        scorer=scorer_factory(ExactScorer()),
    )
    second.run()

    assert second.step == 4
    a, b = straight.model.state_dict(), second.model.state_dict()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    assert comparable(read(tmp_path / "resumed" / "metrics.jsonl")) == comparable(
        read(tmp_path / "straight" / "metrics.jsonl")
    )
    assert read(tmp_path / "resumed" / "eval.jsonl")[-1] == read(tmp_path / "straight" / "eval.jsonl")[-1]


def test_the_checkpoint_holds_a_loadable_policy_and_old_ones_are_pruned(make_config, tmp_path):
    cfg = make_config(steps=3, checkpoint={"every": 1, "keep": 2})
    trainer = Trainer(cfg, scorer=scorer_factory(ExactScorer()))
    trainer.run()
    saved = sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir())
    assert saved == ["step_000002", "step_000003"]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    policy = AutoModelForCausalLM.from_pretrained(tmp_path / "run" / "checkpoints" / "step_000003" / "policy")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "run" / "checkpoints" / "step_000003" / "policy")
    assert len(tokenizer) == 16
    for name, tensor in trainer.model.state_dict().items():
        assert torch.equal(policy.state_dict()[name], tensor), name
