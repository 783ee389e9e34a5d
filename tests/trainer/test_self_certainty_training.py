"""The trainer sends its top-k log-probs (``reward.send_logprobs``) and trains on self-certainty alone.

The scorer here is the real ``self_certainty`` verifier, run in this process through
``rewardhub.calls.run_call`` (the path every engine takes), so no service is started.
"""

from __future__ import annotations

import math
import statistics

import pytest
from pydantic import ValidationError
from trainer_helpers import scorer_factory

from rewardhub.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.trainer.config import TrainConfig
from rewardhub.trainer.loop import Trainer
from rewardhub.verifiers.self_certainty import SelfCertaintyVerifier

VOCAB = 16  # the toy model's character vocabulary: k = 16 sends the whole distribution


class SelfCertaintyScorer:
    """Scores with the self_certainty verifier; keeps what it was sent and how often the sum was right."""

    def __init__(self) -> None:
        self.samples: list = []
        self.exact: list[float] = []

    async def score(self, samples, verifier=None):
        self.samples.extend(samples)
        self.exact.append(statistics.mean(float(s.response.strip() == str(s.reference)) for s in samples))
        call = Call("self_certainty", SelfCertaintyVerifier.Config(), tuple(samples), "rule", 30.0)
        return run_call(Registry([SelfCertaintyVerifier]), call)


def test_the_sent_log_probs_are_the_distribution_the_engine_sampled_from(make_config, tmp_path):
    cfg = make_config(steps=1, reward={"send_logprobs": VOCAB}, debug={"dump": True}, data={"eval": None})
    scorer = SelfCertaintyScorer()
    Trainer(cfg, scorer=scorer_factory(scorer)).run()
    rows = _dump(tmp_path)  # in the order the samples were generated and sent
    assert len(scorer.samples) == len(rows) == 16
    for sample, row in zip(scorer.samples, rows, strict=True):
        assert (sample.group, sample.response) == (row["group"], row["response"])
        sent = sample.metadata["logprobs"]
        assert sample.metadata["response_tokens"] == len(sent) >= 1
        sampled = row["rollout_logprobs"]
        for top, chosen in zip(sent, sampled, strict=True):
            assert len(top) == VOCAB and top == sorted(top, reverse=True)
            assert sum(math.exp(v) for v in top) == pytest.approx(1.0, abs=1e-4)  # the whole vocabulary
            assert min(abs(v - chosen) for v in top) < 1e-4  # the sampled token's log-prob is among them


def test_training_on_self_certainty_alone_raises_it(make_config):
    """The reward rises on self-certainty alone; the sums do not get right (it rewards confidence)."""
    cfg = make_config(
        steps=30,
        reward={"send_logprobs": VOCAB},
        algorithm={"entropy_coef": 0.0},
        optim={"lr": 1e-2},
        data={"eval": None},
    )
    scorer = SelfCertaintyScorer()
    rows = Trainer(cfg, scorer=scorer_factory(scorer)).run()
    first = statistics.mean(r["reward/mean"] for r in rows[:5])
    last = statistics.mean(r["reward/mean"] for r in rows[-5:])
    print(
        f"self_certainty {first:.3f} -> {last:.3f}; entropy {rows[0]['actor/entropy']:.2f} -> "
        f"{rows[-1]['actor/entropy']:.2f}; exact {statistics.mean(scorer.exact[:5]):.2f} -> "
        f"{statistics.mean(scorer.exact[-5:]):.2f}"
    )
    assert all(r["reward/ok_frac"] == 1.0 for r in rows)
    assert first < 0.2 and last > 2.0 and last > 10 * first
    assert rows[-1]["actor/entropy"] < 0.5 * rows[0]["actor/entropy"]  # confidence is what it buys


def test_the_vllm_engine_cannot_send_them_yet():
    raw = {"data": {"train": "x"}, "rollout": {"engine": "vllm"}, "reward": {"send_logprobs": 5}}
    with pytest.raises(ValidationError, match="reward.send_logprobs needs rollout.engine hf"):
        TrainConfig.model_validate(raw)


def _dump(tmp_path):
    import json

    return [json.loads(line) for line in (tmp_path / "run" / "debug" / "step_000001.jsonl").read_text().splitlines()]
