"""The toy addition example learns: a shortened run of examples/toy_addition.yaml, against the
service's `exact` verifier, raises the reward without collapsing the entropy.

The full run (1500 steps, held-out reward >= 0.9) is the example itself; this is its first 100
steps (seeded, one CPU thread: the same 100 steps on every run), in which the reward goes from
about 0.01 to about 0.19 while the entropy is still near 2. It runs without the reference model,
which the example keeps only to report ``actor/ref_kl`` (its KL coefficient is 0), and with the
embedded service in the trainer's process, scored from a thread: the steps are the same, each
cheaper by the reference's forward pass, and the run starts two interpreters fewer (the child
processes are tested in test_end_to_end.py and test_reward_service.py).
"""

import statistics

import pytest

from rewardhub.trainer.config import load_config
from rewardhub.trainer.loop import Trainer

STEPS = 100


@pytest.mark.integration  # a training run against a service it starts
def test_toy_addition_reward_rises_without_entropy_collapse(tmp_path):
    cfg = load_config(
        "examples/toy_addition.yaml",
        [
            f"steps={STEPS}",
            "optim.schedule=constant",  # the example's cosine would decay over these steps instead of its 1500
            f"output_dir={tmp_path}",
            "threads=1",
            "data.eval=null",
            "logging.progress=false",
            "checkpoint.save_final=false",
            "algorithm.kl.reference=false",  # reported only: the update is the same without it
            "reward.embedded_in=thread",  # the same service and verdicts, one interpreter fewer to start
            "reward.client_process=false",
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
