"""Rollout engines: transformers on CPU (and any torch device), vLLM on GPU.

The vLLM engine is imported lazily (:func:`trainer_client.rollout.vllm_engine.VLLMRolloutEngine`)
so that this package imports without vLLM installed.
"""

from trainer_client.rollout.base import Rollout, RolloutEngine, SamplingParams, concat_rollouts, left_pad
from trainer_client.rollout.hf import HFRolloutEngine, position_ids_for
from trainer_client.rollout.sampling import sampling_logprobs

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
