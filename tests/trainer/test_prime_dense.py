"""PRIME's dense rewards from a second verifier: where they land, what masks a sample, and the
policy's weights written for the service (``reward.dense`` with ``$policy``)."""

from __future__ import annotations

import json

import pytest
import torch
from trainer_helpers import ExactScorer, scorer_factory
from transformers import AutoModelForCausalLM

from rewardhub.trainer.config import AlgorithmConfig
from rewardhub.trainer.loop import Trainer
from rewardhub.trainer.objective import compute_advantages, dense_token_rewards
from rewardhub.trainer.rewards import to_reward_batch
from rewardhub.types import Result


def dump_rows(run_dir, step=1):
    return [json.loads(line) for line in (run_dir / "debug" / f"step_{step:06d}.jsonl").read_text().splitlines()]


DENSE = {"name": "implicit_prm", "config": {"model": "$policy", "ref_model": "the-starting-model"}}


def test_token_rewards_of_a_stopped_response_sit_on_its_text_tokens_and_not_on_the_end_token():
    # 4 response tokens, the last one the end-of-sequence token the service never saw: 3 values
    mask = torch.ones(2, 4, dtype=torch.bool)
    values = ([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    out, spread = dense_token_rewards(values, mask, ended=torch.tensor([True, False]))
    assert out[0].tolist() == torch.tensor([0.1, 0.2, 0.3, 0.0]).tolist()
    # cut by the budget, 4 tokens and 3 values do not match: spread at fractions of the response
    assert out[1].tolist() == torch.tensor([0.1, 0.0, 0.2, 0.3]).tolist()
    assert spread == 1


def test_prime_discounts_the_dense_returns_by_the_configured_gamma():
    # group of 2, two tokens each; dense [1, 0] and [0, 0]: baselines 0 and 0.5 (the other's mean),
    # so [1, 0] and [-0.5, -0.5]; returns at gamma 0.5: [1, 0] and [-0.5 - 0.25, -0.5];
    # the outcome 1, 0 adds its RLOO +1, -1 to every token: [2, 1], [-1.75, -1.5], then whitened
    mask = torch.ones(2, 2, dtype=torch.bool)
    dense = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    cfg = AlgorithmConfig(advantage="prime", gamma=0.5)
    adv = compute_advantages(cfg, torch.tensor([[1.0, 0.0]]), torch.ones(1, 2, dtype=torch.bool), mask, dense=dense)
    raw = torch.tensor([2.0, 1.0, -1.75, -1.5])
    assert adv.flatten().tolist() == pytest.approx(((raw - raw.mean()) / raw.std()).tolist(), abs=1e-6)


def test_a_sample_the_dense_verifier_could_not_judge_is_masked_with_its_error():
    outcome = to_reward_batch([Result.ok(1.0), Result.ok(0.0)], ["math", "math"])
    dense = to_reward_batch([Result.ok(-0.2, steps=[0.1, -0.2]), Result.failed("model failed")], ["math", "math"])
    merged = outcome.with_dense(dense)
    assert merged.scores.tolist() == [1.0, 0.0]  # the outcome's scores, never the dense verifier's
    assert merged.valid.tolist() == [True, False]
    assert merged.statuses[1] == dense.statuses[1] and merged.errors[1] == "dense: model failed"
    assert merged.steps == ([0.1, -0.2], None)


class PolicyReader:
    """The outcome from ExactScorer; for the dense spec, reads the policy folder it was sent."""

    def __init__(self) -> None:
        self.exact = ExactScorer()
        self.folders: list[str] = []
        self.weights: list[dict[str, torch.Tensor]] = []

    async def score(self, samples, verifier=None):
        if not (isinstance(verifier, dict) and verifier.get("name") == "implicit_prm"):
            return await self.exact.score(samples, verifier)
        folder = verifier["config"]["model"]
        self.folders.append(folder)
        model = AutoModelForCausalLM.from_pretrained(folder)
        self.weights.append({k: v.clone() for k, v in model.state_dict().items()})
        return [Result.ok(0.0, steps=[0.05] * max(len(s.response), 1)) for s in samples]


def test_a_prime_run_sends_the_dense_verifier_the_policy_that_generated_the_step(make_config, tmp_path):
    cfg = make_config(
        steps=2,
        algorithm={"advantage": "prime"},
        reward={"dense": DENSE},
        debug={"dump": True},
        data={"eval": None},
    )
    scorer = PolicyReader()
    trainer = Trainer(cfg, scorer=scorer_factory(scorer))
    start = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    rows = trainer.run()
    run = tmp_path / "run"
    assert scorer.folders == [str(run / "policy" / "step_0"), str(run / "policy" / "step_1")]
    # step 0's folder holds the starting weights exactly; step 1's the weights after one update
    assert all(torch.equal(scorer.weights[0][k], start[k]) for k in start)
    assert any(not torch.equal(scorer.weights[1][k], start[k]) for k in start)
    assert not (run / "policy" / "step_0").exists() and (run / "policy" / "step_1").is_dir()
    # the outcome verifier judged every sample; the dense rewards are the dense verifier's
    assert len(scorer.exact.seen) == 2 * cfg.rollout.batch_size
    assert all(set(r["reward_steps"]) <= {0.05} for r in dump_rows(run))
    assert rows[0]["reward/dense_frac"] == 1.0 and rows[0]["time/publish_s"] > 0
    assert rows[0]["reward/dense_token_mean"] == pytest.approx(0.05)
