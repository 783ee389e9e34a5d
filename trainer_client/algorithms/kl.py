"""KL divergence to the reference policy, estimated per token from the sampled tokens.

With r = pi_ref(y_t) / pi(y_t) evaluated at tokens sampled from pi (Schulman 2020, "Approximating
KL Divergence", http://joschu.net/blog/kl-approx.html):

    k1 = -log r                  unbiased, high variance, can be negative per token
    k2 = (log r)^2 / 2           biased, low variance, its gradient is the true KL's gradient
    k3 = (r - 1) - log r         unbiased, low variance, always >= 0 (GRPO's choice)

In the reward (``kl.where: reward``) the penalty -beta * k enters the returns, detached; in the
loss (``kl.where: loss``) beta * k is added to each token's loss and differentiated.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

__all__ = ["KLEstimator", "kl_k1", "kl_k2", "kl_k3", "kl_penalty"]

KLEstimator = Literal["k1", "k2", "k3"]


def kl_k1(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """k1 = log pi(y_t) - log pi_ref(y_t).  [B, T], [B, T] -> [B, T]"""
    return logp - ref_logp


def kl_k2(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """k2 = (log pi(y_t) - log pi_ref(y_t))^2 / 2.  [B, T], [B, T] -> [B, T]"""
    return 0.5 * (logp - ref_logp) ** 2


def kl_k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """k3 = exp(log_r) - 1 - log_r with log_r = log pi_ref - log pi.  [B, T], [B, T] -> [B, T]

    The log-ratio is clamped to [-20, 20] so one token the policy has moved far from the reference
    cannot overflow the exponential.
    """
    log_ratio = (ref_logp - logp).clamp(-20.0, 20.0)
    return torch.expm1(log_ratio) - log_ratio


_ESTIMATORS = {"k1": kl_k1, "k2": kl_k2, "k3": kl_k3}


def kl_penalty(logp: Tensor, ref_logp: Tensor, estimator: KLEstimator) -> Tensor:
    """The chosen estimator, per token.  [B, T], [B, T] -> [B, T]"""
    try:
        return _ESTIMATORS[estimator](logp, ref_logp)
    except KeyError:
        raise ValueError(f"unknown KL estimator {estimator!r}; expected one of {sorted(_ESTIMATORS)}") from None
