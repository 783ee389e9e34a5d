"""rewardhub-train: GRPO-family reinforcement learning against a rewardhub service.

The trainer samples responses (a lean decoder for Llama-family models, else transformers, on the
CPU or a GPU; vLLM colocated on a GPU with ``rollout.engine: vllm``), gets their rewards from the
service over HTTP through :mod:`rewardhub.client`, computes advantages and updates the policy
with the pure functions of :mod:`rewardhub.trainer.algorithms`. One step reads top to bottom in
:mod:`rewardhub.trainer.step`. Start with ``examples/toy_addition.yaml``.
"""

from .char_tokenizer import build_char_tokenizer
from .config import TrainConfig, apply_overrides, load_config
from .loop import Trainer
from .metrics import METRICS, MetricsWriter, describe_metric
from .plot import plot_run
from .rewards import reward_service
from .rollout import HFRolloutEngine, Rollout, SamplingParams

__all__ = [
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
