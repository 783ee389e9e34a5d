"""The loop's contract: masking, metrics, dynamic sampling, dumps, and every algorithm switch."""

import json
import math

import pytest
from trainer_helpers import ExactScorer, scorer_factory

from rewardhub.trainer.loop import Trainer
from rewardhub.trainer.metrics import describe_metric
from rewardhub.types import Result

POINT_5 = [
    "step",
    "reward/mean",
    "reward/std",
    "actor/entropy",
    "actor/ppo_kl",
    "actor/clipfrac",
    "actor/ref_kl",
    "rollout/mismatch_kl",
    "actor/grad_norm",
    "rollout/is_ratio_mean",
    "rollout/is_ratio_max",
    "rollout/tis_truncated_frac",
    "rollout/token_masked_frac",
    "response/length_mean",
    "response/length_max",
    "response/clip_frac",
    "groups/zero_variance_frac",
    "perf/tokens_per_s",
    "time/generate_s",
    "time/reward_s",
    "time/train_s",
]


def dump_rows(run_dir, step=1):
    return [json.loads(line) for line in (run_dir / "debug" / f"step_{step:06d}.jsonl").read_text().splitlines()]


def test_every_logged_metric_is_in_the_table_and_point_5_is_covered(make_config, tmp_path):
    rows = Trainer(make_config(), scorer=scorer_factory(ExactScorer())).run()
    for row in rows:
        for key in row:
            assert key == "step" or describe_metric(key), (
                f"{key} is not documented in rewardhub.trainer.metrics.METRICS"
            )
        for key in POINT_5:
            assert key in row, key
            assert math.isfinite(row[key])
    written = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in written] == [1, 2]
    assert "eval/reward_mean" in written[-1]
    assert (tmp_path / "run" / "config.yaml").exists()


def test_samples_the_service_could_not_judge_are_masked_not_scored_zero(make_config, tmp_path):
    # the first sample of every group errors; its (failure) score must not reach the loss
    scorer = ExactScorer(fail=lambda s: s.id.endswith("-0"))
    cfg = make_config(steps=1, debug={"dump": True}, data={"eval": None})
    row = Trainer(cfg, scorer=scorer_factory(scorer)).run()[0]
    assert row["reward/error_frac"] == 0.25
    assert row["reward/masked_frac"] == 0.25
    for sample in dump_rows(tmp_path / "run"):
        failed = sample["reward_status"] == "error"
        assert failed == (sample["index"] % 4 == 0)
        assert sample["in_loss"] == (not failed)
        if failed:
            assert sample["reward_error"] == "verifier crashed"
            assert all(a == 0.0 for a in sample["advantages"])


def test_debug_dump_has_every_stage(make_config, tmp_path):
    cfg = make_config(steps=1, debug={"dump": True, "max_samples": 5}, data={"eval": None})
    Trainer(cfg, scorer=scorer_factory(ExactScorer())).run()
    rows = dump_rows(tmp_path / "run")
    assert len(rows) == 5
    for row in rows:
        for key in (
            "prompt",
            "response",
            "response_ids",
            "rollout_logprobs",
            "trainer_logprobs",
            "reward_score",
            "reward_status",
            "reward_details",
            "advantages",
            "shaped_reward",
        ):
            assert key in row, key
        assert len(row["rollout_logprobs"]) == len(row["trainer_logprobs"]) == len(row["response_ids"])
        assert row["rollout_logprobs"] == pytest.approx(row["trainer_logprobs"], abs=1e-3)


class Mixed:
    """Groups of even prompts (by first digit) get mixed rewards; odd ones all get 0."""

    async def score(self, samples, verifier=None):
        return [Result.ok(float(int(s.prompt[0]) % 2 == 0 and int(s.id.rsplit("-", 1)[1]) % 2 == 0)) for s in samples]


def test_dynamic_sampling_keeps_only_informative_groups_and_refills(make_config, tmp_path):
    cfg = make_config(
        steps=1,
        algorithm={"dynamic_sampling": {"enabled": True, "max_rounds": 4}},
        debug={"dump": True},
        data={"eval": None},
    )
    row = Trainer(cfg, scorer=scorer_factory(Mixed())).run()[0]
    assert row["groups/rounds"] > 1
    assert row["groups/kept"] == 4
    assert row["groups/generated"] == 4 * row["groups/rounds"]
    groups = {}
    for sample in dump_rows(tmp_path / "run"):
        groups.setdefault(sample["group"], set()).add(sample["reward_score"])
    assert len(groups) == 4 and all(len(scores) == 2 for scores in groups.values())


def test_overlong_penalty_and_truncation_mask(make_config):
    cfg = make_config(
        steps=1,
        rollout={"max_new_tokens": 2},
        reward={"overlong": {"buffer": 1}, "mask_truncated": True},
        data={"eval": None},
    )
    row = Trainer(cfg, scorer=scorer_factory(ExactScorer())).run()[0]
    assert row["response/clip_frac"] > 0
    assert row["reward/overlong_penalty"] < 0
    assert row["reward/masked_frac"] == pytest.approx(row["response/clip_frac"])


def test_tensorboard_mirror(make_config, tmp_path):
    pytest.importorskip("tensorboard")
    Trainer(
        make_config(steps=1, logging={"progress": False, "tensorboard": True}, data={"eval": None}),
        scorer=scorer_factory(ExactScorer()),
    ).run()
    assert any((tmp_path / "run" / "tb").glob("events.out.tfevents.*"))


class Dense:
    """An implicit-PRM-like scorer: outcome plus one dense reward per response character."""

    async def score(self, samples, verifier=None):
        return [Result.ok(float(s.response == s.reference), steps=[0.1] * (len(s.response) + 1)) for s in samples]


@pytest.mark.parametrize(
    "algorithm",
    [
        {"advantage": "dr_grpo", "aggregation": "constant"},
        {"advantage": "rloo", "aggregation": "seq_mean_token_mean"},
        {"advantage": "reinforce_pp", "kl": {"coef": 0.01, "where": "reward", "estimator": "k1"}},
        {"advantage": "reinforce_pp_baseline", "aggregation": "seq_mean_token_sum"},
        {"advantage": "grpo", "policy_loss": "gspo", "aggregation": "seq_mean_token_mean"},
        {"advantage": "grpo", "policy_loss": "cispo", "kl": {"coef": 0.05, "estimator": "k2"}},
        {"epochs": 2, "mini_batches": 2, "dual_clip": 3.0},
        {
            "old_logprobs": "rollout",
            "mismatch": {"tis_cap": 2.0, "token_mask": [0.5, 2.0], "sequence_filter": [0.9, 1.1]},
        },
        {"kl": {"reference": False}},
    ],
)
def test_each_algorithm_switch_runs_a_finite_step(make_config, algorithm):
    cfg = make_config(steps=1, algorithm=algorithm, optim={"lr": 1e-3, "micro_batch_size": 4}, data={"eval": None})
    row = Trainer(cfg, scorer=scorer_factory(ExactScorer())).run()[0]
    assert all(math.isfinite(v) for v in row.values() if isinstance(v, float))
    if algorithm.get("epochs", 1) > 1:
        assert row["actor/ppo_kl"] != 0.0


def test_the_mismatch_is_measured_wherever_the_kl_goes(make_config, tmp_path):
    # top-k sampling makes the engine's log-probs (renormalised over 3 tokens) differ from the
    # trainer's; anchoring the ratio and the KL on the engine must not hide that difference
    mismatch = {}
    for where in ("loss", "reward"):
        cfg = make_config(
            steps=1,
            output_dir=str(tmp_path / where),
            rollout={"top_k": 3},
            algorithm={"old_logprobs": "rollout", "kl": {"coef": 0.05, "where": where}},
            data={"eval": None},
        )
        row = Trainer(cfg, scorer=scorer_factory(ExactScorer())).run()[0]
        mismatch[where] = (row["rollout/mismatch_kl"], row["rollout/is_ratio_max"])
    assert mismatch["loss"][0] > 0.1 and mismatch["loss"][1] < 1.0  # the trainer gives the samples less mass
    assert mismatch["reward"] == mismatch["loss"]  # the same samples, measured the same way, before any update


def test_prime_uses_the_dense_rewards(make_config, tmp_path):
    cfg = make_config(steps=1, algorithm={"advantage": "prime"}, debug={"dump": True}, data={"eval": None})
    Trainer(cfg, scorer=scorer_factory(Dense())).run()
    rows = dump_rows(tmp_path / "run")
    assert any(r["reward_steps"] for r in rows)
    assert any(abs(a) > 0 for r in rows for a in r["advantages"])


class Counting(ExactScorer):
    def __init__(self):
        super().__init__()
        self.requests = []

    async def score(self, samples, verifier=None):
        self.requests.append(len(samples))
        return await super().score(samples, verifier)


def test_chunked_generation_sends_each_chunk_for_scoring_as_soon_as_it_exists(make_config):
    scorer = Counting()
    cfg = make_config(steps=1, rollout={"chunk_prompts": 2}, data={"eval": None})
    row = Trainer(cfg, scorer=scorer_factory(scorer)).run()[0]
    assert scorer.requests == [8, 8]  # 2 prompts x 4 samples, twice
    assert row["reward/verifier/exact/count"] == 16
