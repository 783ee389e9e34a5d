"""The mathematics of the trainer, as pure functions of tensors.

Each function takes tensors and returns tensors, carries its formula and paper in its docstring
and is tested against numbers computed by hand in ``tests/trainer/algorithms``.
"""

from .advantages import (
    broadcast_to_tokens,
    dr_grpo_advantages,
    grpo_advantages,
    prime_advantages,
    reinforce_pp_advantages,
    reinforce_pp_baseline_advantages,
    remax_advantages,
    rloo_advantages,
    terminal_token_rewards,
)
from .aggregation import Aggregation, Normaliser, aggregate, normaliser_for
from .entropy import entropy_bonus, entropy_from_logits
from .filtering import informative_groups, overlong_penalty, zero_variance_groups
from .kl import KLEstimator, kl_k1, kl_k2, kl_k3, kl_penalty
from .losses import cispo_loss, gspo_loss, ppo_clip_loss
from .mismatch import (
    geometric_mean_ratio,
    mismatch_kl,
    mismatch_sums,
    sequence_filter,
    tis_weights,
    token_mask,
)

__all__ = [
    "Aggregation",
    "KLEstimator",
    "Normaliser",
    "aggregate",
    "broadcast_to_tokens",
    "cispo_loss",
    "dr_grpo_advantages",
    "entropy_bonus",
    "entropy_from_logits",
    "geometric_mean_ratio",
    "grpo_advantages",
    "gspo_loss",
    "informative_groups",
    "kl_k1",
    "kl_k2",
    "kl_k3",
    "kl_penalty",
    "mismatch_kl",
    "mismatch_sums",
    "normaliser_for",
    "overlong_penalty",
    "ppo_clip_loss",
    "prime_advantages",
    "reinforce_pp_advantages",
    "reinforce_pp_baseline_advantages",
    "remax_advantages",
    "rloo_advantages",
    "sequence_filter",
    "terminal_token_rewards",
    "tis_weights",
    "token_mask",
    "zero_variance_groups",
]
