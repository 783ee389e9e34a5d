"""The trainer package's public names are pinned: changing them is a decision, not an accident."""

import trainer_client
import trainer_client.algorithms
import trainer_client.rollout


def test_trainer_client_exports():
    assert sorted(trainer_client.__all__) == sorted(
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
    for name in trainer_client.__all__:
        assert hasattr(trainer_client, name)


def test_algorithms_export_every_pure_function():
    for name in trainer_client.algorithms.__all__:
        assert callable(getattr(trainer_client.algorithms, name)) or name in {"Aggregation", "KLEstimator"}
    assert {"grpo_advantages", "ppo_clip_loss", "gspo_loss", "cispo_loss", "kl_k3", "aggregate", "tis_weights"} <= set(
        trainer_client.algorithms.__all__
    )


def test_rollout_exports():
    assert "VLLMRolloutEngine" not in trainer_client.rollout.__all__  # imported lazily: vLLM is optional
    assert {"HFRolloutEngine", "Rollout", "SamplingParams"} <= set(trainer_client.rollout.__all__)
