"""The toy addition example learns: a shortened run of examples/toy_addition.yaml, against the
service's `exact` verifier, raises the reward without collapsing the entropy.

The full run (800 steps, held-out reward >= 0.9) is the example itself; this is its first 150
steps, which take well under a minute on one CPU thread.
"""

import statistics

from rewardhub.trainer.config import load_config
from rewardhub.trainer.loop import Trainer

STEPS = 150


def test_toy_addition_reward_rises_without_entropy_collapse(tmp_path):
    cfg = load_config(
        "examples/toy_addition.yaml",
        [
            f"steps={STEPS}",
            "optim.schedule=constant",  # the example's cosine would decay over these 150 steps instead of 800
            f"output_dir={tmp_path}",
            "threads=1",
            "data.eval=null",
            "logging.progress=false",
            "checkpoint.save_final=false",
        ],
    )
    rows = Trainer(cfg).run()
    first = statistics.mean(r["reward/mean"] for r in rows[:10])
    last = statistics.mean(r["reward/mean"] for r in rows[-10:])
    assert first < 0.05  # a random policy almost never writes the sum and stops
    assert last > 0.15, f"reward only went from {first:.3f} to {last:.3f}"
    assert last > 5 * first
    # learning, not collapse: the policy is still exploring (a collapsed one sits near 0)
    assert statistics.mean(r["actor/entropy"] for r in rows[-10:]) > 0.5
    assert all(r["reward/ok_frac"] == 1.0 for r in rows)
