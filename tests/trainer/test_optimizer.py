"""Weight decay on matrices only; the learning-rate schedules by hand."""

import pytest

from rewardhub.trainer.config import ModelConfig, OptimConfig
from rewardhub.trainer.modeling import load_policy
from rewardhub.trainer.optim import build_optimizer, lr_factor


def test_norm_gains_are_never_decayed():
    model, _ = load_policy(ModelConfig(), seed=0)
    optimizer = build_optimizer(model, OptimConfig(weight_decay=0.5))
    decayed, plain = optimizer.param_groups
    assert decayed["weight_decay"] == 0.5 and plain["weight_decay"] == 0.0
    assert all(p.ndim >= 2 for p in decayed["params"]) and all(p.ndim == 1 for p in plain["params"])
    assert id(model.model.norm.weight) in {id(p) for p in plain["params"]}
    assert sum(p.numel() for g in optimizer.param_groups for p in g["params"]) == sum(
        p.numel() for p in model.parameters()
    )


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("constant", [0.5, 1.0, 1.0, 1.0, 1.0]),
        ("linear", [0.5, 1.0, 2 / 3, 1 / 3, 0.0]),
        ("cosine", [0.5, 1.0, 0.75, 0.25, 0.0]),
    ],
)
def test_warmup_then_decay(schedule, expected):
    # 2 warm-up steps, 5 steps in all: the decay spans steps 2..5
    factor = lr_factor(OptimConfig(warmup_steps=2, schedule=schedule), total_steps=5)
    assert [factor(s) for s in (0, 1, 3, 4, 5)] == pytest.approx(expected)
