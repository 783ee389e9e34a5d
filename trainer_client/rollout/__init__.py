"""Rollout engines: transformers on CPU (and any torch device), vLLM on GPU.

The vLLM engine is imported lazily (:func:`rewardhub.trainer.rollout.vllm_engine.VLLMRolloutEngine`)
so that this package imports without vLLM installed.
"""

from .base import Rollout, RolloutEngine, SamplingParams, concat_rollouts, left_pad
from .hf import HFRolloutEngine, position_ids_for
from .sampling import sampling_logprobs

__all__ = [
    "HFRolloutEngine",
    "Rollout",
    "RolloutEngine",
    "SamplingParams",
    "concat_rollouts",
    "left_pad",
    "position_ids_for",
    "sampling_logprobs",
]
