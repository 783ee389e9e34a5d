"""Advantage estimators and policy losses are looked up in two tables; a name is valid when, and
only when, it is a key of its table, and adding one is a function and an entry, nothing else."""

import json

import pytest
import torch
import yaml
from pydantic import ValidationError
from trainer_helpers import ExactScorer, scorer_factory

from rewardhub.trainer.algorithms.tables import (
    ADVANTAGE_ESTIMATORS,
    POLICY_LOSSES,
    AdvantageEstimator,
    per_sample,
)
from rewardhub.trainer.cli import EXIT_CONFIG, main
from rewardhub.trainer.config import AlgorithmConfig, TrainConfig
from rewardhub.trainer.loop import Trainer
from rewardhub.types import Result

TABLES = [("advantage", ADVANTAGE_ESTIMATORS), ("policy_loss", POLICY_LOSSES)]


def dump_rows(run_dir):
    return [json.loads(line) for line in (run_dir / "debug" / "step_000001.jsonl").read_text().splitlines()]


def test_the_built_in_names():
    assert list(ADVANTAGE_ESTIMATORS) == [
        "grpo",
        "dr_grpo",
        "rloo",
        "reinforce_pp",
        "reinforce_pp_baseline",
        "prime",
        "remax",
    ]
    assert list(POLICY_LOSSES) == ["ppo_clip", "gspo", "cispo"]


@pytest.mark.parametrize(("field", "table"), TABLES)
def test_the_config_accepts_exactly_the_names_in_its_table(field, table):
    for name in table:
        assert getattr(AlgorithmConfig.model_validate({field: name}), field) == name
    with pytest.raises(ValidationError) as refused:
        AlgorithmConfig.model_validate({field: "no_such_name"})
    assert f"'no_such_name'; expected one of {', '.join(table)}" in str(refused.value)


@pytest.mark.parametrize(("field", "table"), TABLES)
def test_the_config_reads_the_table_when_it_validates(field, table, monkeypatch):
    name, entry = list(table.items())[-1]
    monkeypatch.setitem(table, "added_later", entry)
    assert getattr(AlgorithmConfig.model_validate({field: "added_later"}), field) == "added_later"
    monkeypatch.delitem(table, name)
    with pytest.raises(ValidationError, match=name):
        AlgorithmConfig.model_validate({field: name})


@pytest.mark.parametrize("name", list(ADVANTAGE_ESTIMATORS))
def test_only_the_group_relative_estimators_need_two_samples_per_prompt(name):
    raw = {"data": {"train": "x"}, "rollout": {"group_size": 1}, "algorithm": {"advantage": name}}
    if ADVANTAGE_ESTIMATORS[name].group_relative:
        with pytest.raises(ValidationError, match="group_size must be >= 2"):
            TrainConfig.model_validate(raw)
    else:
        assert TrainConfig.model_validate(raw).rollout.group_size == 1


def half_baseline(rewards, valid, settings):
    """A = r - 0.5: every prompt gets the same baseline, so a group of one sample still learns."""
    return torch.where(valid, rewards - 0.5, torch.zeros_like(rewards))


def test_an_estimator_added_to_the_table_only_is_the_one_the_trainer_runs(make_config, monkeypatch, tmp_path):
    monkeypatch.setitem(
        ADVANTAGE_ESTIMATORS, "half_baseline", AdvantageEstimator(per_sample(half_baseline), group_relative=False)
    )
    cfg = make_config(
        steps=1,
        algorithm={"advantage": "half_baseline"},
        rollout={"group_size": 1},  # refused for every built-in estimator but reinforce_pp
        debug={"dump": True},
        data={"eval": None},
    )
    scorer = ExactScorer(fail=lambda s: s.prompt.startswith("0+"))
    Trainer(cfg, scorer=scorer_factory(scorer)).run()
    rows = dump_rows(tmp_path / "run")
    assert len(rows) == 4
    for row in rows:
        if row["reward_status"] == "ok":
            assert row["advantages"] == [row["reward_score"] - 0.5] * len(row["response_ids"])
        else:
            assert row["advantages"] == [0.0] * len(row["response_ids"])
    assert any(row["reward_status"] == "ok" for row in rows)


class Alternating:
    """Even samples of every group score 1, odd ones 0: every group has non-zero advantages."""

    async def score(self, samples, verifier=None):
        return [Result.ok(float(int(s.id.rsplit("-", 1)[1]) % 2 == 0)) for s in samples]


def test_a_policy_loss_added_to_the_table_only_is_the_one_the_trainer_runs(make_config, monkeypatch, tmp_path):
    calls = []

    def reinforce(logp, old_logp, advantages, mask, settings):
        """Vanilla policy gradient, -A * log pi: no ratio, nothing clipped."""
        calls.append(tuple(logp.shape))
        return -advantages * logp, torch.zeros_like(logp)

    monkeypatch.setitem(POLICY_LOSSES, "reinforce", reinforce)
    cfg = make_config(steps=1, algorithm={"policy_loss": "reinforce"}, debug={"dump": True}, data={"eval": None})
    row = Trainer(cfg, scorer=scorer_factory(Alternating())).run()[0]
    assert calls == [(16, 4)]  # one micro-batch of 4 prompts x 4 samples, 4 new tokens
    # the logged policy-gradient loss is this function's, token-mean aggregated over the dumped samples
    rows = dump_rows(tmp_path / "run")
    tokens = [
        (a, lp) for r in rows if r["in_loss"] for a, lp in zip(r["advantages"], r["trainer_logprobs"], strict=True)
    ]
    reinforce_loss = sum(-a * lp for a, lp in tokens) / len(tokens)
    ppo_loss = sum(-a for a, _ in tokens) / len(tokens)  # what the default would log: on-policy, ratio 1
    assert row["actor/pg_loss"] == pytest.approx(reinforce_loss, rel=1e-3)
    assert abs(reinforce_loss - ppo_loss) > 0.1
    assert row["actor/clipfrac"] == 0.0


class GreedyBaseline:
    """Greedy responses score 0.25 (prompt 0+0's cannot be judged); sampled ones 1 when even-numbered."""

    def __init__(self) -> None:
        self.greedy: list[str] = []

    async def score(self, samples, verifier=None):
        out = []
        for s in samples:
            if "-greedy-" in s.id:
                self.greedy.append(s.id)
                out.append(Result.failed("no verdict") if s.prompt == "0+0=" else Result.ok(0.25))
            else:
                out.append(Result.ok(float(int(s.id.rsplit("-", 1)[1]) % 2 == 0)))
        return out


def test_remax_trains_on_the_reward_minus_the_greedy_responses(make_config, tmp_path):
    """ReMax: one greedy response per prompt is generated and scored; A = r - r_greedy on every token."""
    cfg = make_config(
        steps=1,
        algorithm={"advantage": "remax"},
        rollout={"group_size": 2, "prompts_per_step": 4},
        debug={"dump": True},
        data={"eval": None},
    )
    scorer = GreedyBaseline()
    row = Trainer(cfg, scorer=scorer_factory(scorer)).run()[0]
    assert len(scorer.greedy) == 4 and len(set(scorer.greedy)) == 4  # one per prompt, in its own group
    assert row["reward/greedy_mean"] == pytest.approx(0.25)  # the unjudged one is left out
    rows = dump_rows(tmp_path / "run")
    assert len(rows) == 8
    for r in rows:
        baseline_judged = r["prompt"] != "0+0="
        expected = r["reward_score"] - 0.25 if baseline_judged else 0.0
        assert r["advantages"] == pytest.approx([expected] * len(r["response_ids"]))
    assert {r["reward_score"] for r in rows} == {0.0, 1.0}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("algorithm.advantage=ppo", "unknown advantage estimator 'ppo'; expected one of grpo, dr_grpo"),
        ("algorithm.policy_loss=grpo", "unknown policy loss 'grpo'; expected one of ppo_clip, gspo, cispo"),
    ],
)
def test_an_unknown_name_is_refused_before_anything_runs(make_config, tmp_path, capsys, override, message):
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(make_config().model_dump(mode="json")))
    assert main([str(path), override, "--quiet"]) == EXIT_CONFIG
    assert message in capsys.readouterr().err
