"""The trainer package's public names are pinned: changing them is a decision, not an accident."""

import rewardhub.trainer
import rewardhub.trainer.algorithms
import rewardhub.trainer.rollout


def test_trainer_client_exports():
    assert sorted(rewardhub.trainer.__all__) == sorted(
        [
            "METRICS",
            "HFRolloutEngine",
            "MetricsWriter",
            "Rollout",
            "SamplingParams",
            "TrainConfig",
            "Trainer",
            "apply_overrides",
            "build_char_tokenizer",
            "describe_metric",
            "load_config",
            "plot_run",
            "reward_service",
        ]
    )
    for name in rewardhub.trainer.__all__:
        assert hasattr(rewardhub.trainer, name)


def test_algorithms_export_every_pure_function():
    for name in rewardhub.trainer.algorithms.__all__:
        assert callable(getattr(rewardhub.trainer.algorithms, name)) or name in {"Aggregation", "KLEstimator"}
    assert {"grpo_advantages", "ppo_clip_loss", "gspo_loss", "cispo_loss", "kl_k3", "aggregate", "tis_weights"} <= set(
        rewardhub.trainer.algorithms.__all__
    )


def test_rollout_exports():
    assert "VLLMRolloutEngine" not in rewardhub.trainer.rollout.__all__  # imported lazily: vLLM is optional
    assert {"HFRolloutEngine", "Rollout", "SamplingParams"} <= set(rewardhub.trainer.rollout.__all__)
