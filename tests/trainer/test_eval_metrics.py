"""Held-out evaluation reports a second verdict (``eval.metrics``) beside the reward, judged by the
service on the same responses, and dumps every held-out response with all its verdicts."""

import json

import pytest
from pydantic import ValidationError
from trainer_helpers import scorer_factory

from rewardhub.trainer.evaluation import eval_line
from rewardhub.trainer.loop import Trainer
from rewardhub.trainer.metrics import describe_metric
from rewardhub.types import Result

STRICT = {"name": "exact", "config": {"extract": "last_number"}}


class TwoReadingScorer:
    """Pays every response 1 under the reward's verifier and 0.25 under the metric's spec, so a
    metric that was scored by the reward's verifier (or not at all) cannot pass for it. As the
    service does, a sample's own verifier wins over the request's."""

    def __init__(self) -> None:
        self.requests: list[tuple[object, list]] = []

    async def score(self, samples, verifier=None):
        self.requests.append((verifier, list(samples)))
        out = []
        for sample in samples:
            spec = sample.verifier if sample.verifier is not None else verifier
            out.append(Result.ok(0.25 if spec == STRICT else 1.0, read_by=str(spec)))
        return out


def eval_dump(run_dir, step):
    path = run_dir / "debug" / f"eval_step_{step:06d}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_metric_is_the_services_verdict_under_its_own_spec(make_config, tmp_path):
    scorer = TwoReadingScorer()
    cfg = make_config(steps=1, eval={"samples_per_prompt": 2, "metrics": {"accuracy": STRICT}})
    row = Trainer(cfg, scorer=scorer_factory(scorer)).run()[0]

    assert row["eval/reward_mean"] == 1.0
    assert row["eval/greedy_reward_mean"] == 1.0
    assert row["eval/metric/accuracy/mean"] == 0.25
    assert row["eval/metric/accuracy/greedy_mean"] == 0.25
    assert describe_metric("eval/metric/accuracy/mean") and describe_metric("eval/metric/accuracy/greedy_mean")
    assert "accuracy 0.250 (greedy 0.250)" in eval_line(row)
    # the metric saw exactly the held-out responses the reward saw, and no record's verifier overrode it
    by_spec = {}
    for verifier, samples in scorer.requests:
        if samples[0].id.startswith("eval-"):
            by_spec.setdefault(json.dumps(verifier, sort_keys=True), []).extend(samples)
    reward_side, metric_side = by_spec[json.dumps("exact")], by_spec[json.dumps(STRICT, sort_keys=True)]
    assert [(s.id, s.response) for s in metric_side] == [(s.id, s.response) for s in reward_side]
    assert all(s.verifier is None for s in metric_side)


def test_a_record_that_names_its_reward_verifier_is_still_judged_by_the_metric(make_config, tmp_path):
    held_out = tmp_path / "named.jsonl"
    held_out.write_text(
        "".join(
            json.dumps({"prompt": f"{a}+{b}=", "reference": str(a + b), "verifier": "math"}) + "\n"
            for a, b in [(5, 4), (6, 2)]
        )
    )
    cfg = make_config(steps=1, data={"eval": str(held_out)}, eval={"metrics": {"accuracy": STRICT}})
    row = Trainer(cfg, scorer=scorer_factory(TwoReadingScorer())).run()[0]
    assert row["eval/reward_mean"] == 1.0
    assert row["eval/metric/accuracy/mean"] == 0.25


def test_without_metrics_the_eval_row_is_unchanged(make_config):
    row = Trainer(make_config(steps=1), scorer=scorer_factory(TwoReadingScorer())).run()[0]
    assert not any(key.startswith("eval/metric/") for key in row)


def test_the_eval_dump_holds_every_held_out_response_with_its_verdicts(make_config, tmp_path):
    cfg = make_config(steps=1, eval={"samples_per_prompt": 2, "metrics": {"accuracy": STRICT}}, debug={"dump": True})
    Trainer(cfg, scorer=scorer_factory(TwoReadingScorer())).run()
    for step in (0, 1):
        rows = eval_dump(tmp_path / "run", step)
        sampled = [r for r in rows if r["mode"] == "sampled"]
        greedy = [r for r in rows if r["mode"] == "greedy"]
        assert len(sampled) == 2 * 2 and len(greedy) == 2  # 2 held-out prompts
        assert {r["reference"] for r in rows} == {"9", "8"}
        for r in rows:
            assert isinstance(r["response"], str)
            assert r["reward"] == {"score": 1.0, "status": "ok", "error": None, "details": {"read_by": "exact"}}
            assert r["metrics"]["accuracy"]["score"] == 0.25


@pytest.mark.parametrize("name", ["", "a/b", "two words"])
def test_a_metric_name_that_would_break_the_metric_path_is_refused(make_config, name):
    with pytest.raises(ValidationError, match="no metric name"):
        make_config(eval={"metrics": {name: STRICT}})
