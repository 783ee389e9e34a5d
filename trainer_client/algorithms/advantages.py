"""Advantage estimators: how much better each sample was than the policy's typical sample.

Outcome estimators (GRPO, Dr. GRPO, RLOO, ReMax) take the rewards of ``P`` prompts with ``G`` samples
each as a ``[P, G]`` matrix and return one advantage per sample, shared by all its tokens.
Token-level estimators (REINFORCE++, PRIME) take per-token rewards and return ``[B, T]``.

``valid`` marks the samples the reward service could judge (status ``ok``). Invalid samples are
left out of every statistic and get advantage 0: a verifier crash is "no judgement", never a
wrong answer that drags its group's baseline down.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._masked import masked_whiten

__all__ = [
    "broadcast_to_tokens",
    "dr_grpo_advantages",
    "grpo_advantages",
    "prime_advantages",
    "reinforce_pp_advantages",
    "reinforce_pp_baseline_advantages",
    "remax_advantages",
    "rloo_advantages",
    "terminal_token_rewards",
]


def _group_stats(rewards: Tensor, valid: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per-group count, mean and unbiased std over the valid samples; shapes [P, 1]."""
    weight = valid.to(rewards.dtype)  # [P, G]
    count = weight.sum(-1, keepdim=True)  # [P, 1]
    mean = (rewards * weight).sum(-1, keepdim=True) / count.clamp(min=1.0)
    var = (((rewards - mean) ** 2) * weight).sum(-1, keepdim=True) / (count - 1).clamp(min=1.0)
    return count, mean, var.sqrt()


def grpo_advantages(rewards: Tensor, valid: Tensor, eps: float = 1e-6) -> Tensor:
    """GRPO: A_i = (r_i - mean(r_group)) / (std(r_group) + eps).

    Shao et al. 2024, "DeepSeekMath" (arXiv:2402.03300), section 4.1.2. The std normalisation is
    what keeps a rarely-solved prompt's one success from being drowned by the entropy bonus: a
    group with a single 1 among zeros still gets an advantage of order 1.
    rewards, valid: [P, G] -> [P, G]
    """
    _, mean, std = _group_stats(rewards, valid)
    return torch.where(valid, (rewards - mean) / (std + eps), torch.zeros_like(rewards))


def dr_grpo_advantages(rewards: Tensor, valid: Tensor) -> Tensor:
    """Dr. GRPO: A_i = r_i - mean(r_group), with no std division.

    Liu et al. 2025, "Understanding R1-Zero-Like Training" (arXiv:2503.20783): dividing by the
    group std up-weights too-easy and too-hard prompts; pair with the ``constant`` aggregation.
    rewards, valid: [P, G] -> [P, G]
    """
    _, mean, _ = _group_stats(rewards, valid)
    return torch.where(valid, rewards - mean, torch.zeros_like(rewards))


def rloo_advantages(rewards: Tensor, valid: Tensor) -> Tensor:
    """RLOO: A_i = r_i - (1/(n-1)) * sum_{j != i} r_j over the n valid samples of the group.

    Kool et al. 2019, "Buy 4 REINFORCE Samples, Get a Baseline for Free!"; Ahmadian et al. 2024
    (arXiv:2402.14740). A group with a single valid sample has no baseline and gets 0.
    rewards, valid: [P, G] -> [P, G]
    """
    count = valid.to(rewards.dtype).sum(-1, keepdim=True)  # [P, 1]
    baseline = _leave_one_out_mean(rewards, valid)  # [P, G]
    return torch.where(valid & (count > 1), rewards - baseline, torch.zeros_like(rewards))


def remax_advantages(rewards: Tensor, valid: Tensor, greedy: Tensor, greedy_valid: Tensor) -> Tensor:
    """ReMax: A_i = r(x, y_i) - r(x, y_greedy), the reward of the prompt's greedy response as baseline.

    Li et al. 2023, "ReMax: A Simple, Effective, and Efficient Reinforcement Learning Method for
    Aligning Large Language Models" (arXiv:2310.10505), Algorithm 1. The greedy response does not
    depend on the sampled one, so subtracting its reward leaves the gradient unbiased and removes
    the prompt's difficulty; no group is needed (G = 1 works). A prompt whose greedy response could
    not be judged has no baseline: its samples get 0.
    rewards, valid: [P, G]; greedy, greedy_valid: [P] -> [P, G]
    """
    has_baseline = valid & greedy_valid.unsqueeze(-1)  # [P, G]
    return torch.where(has_baseline, rewards - greedy.unsqueeze(-1), torch.zeros_like(rewards))


def _leave_one_out_mean(values: Tensor, valid: Tensor) -> Tensor:
    """Mean of the other valid samples of the group. [P, G] -> [P, G]"""
    weight = valid.to(values.dtype)
    count = weight.sum(-1, keepdim=True)  # [P, 1]
    total = (values * weight).sum(-1, keepdim=True)  # [P, 1]
    return (total - values * weight) / (count - weight).clamp(min=1.0)


def terminal_token_rewards(rewards: Tensor, mask: Tensor) -> Tensor:
    """Place each sequence's reward on its last response token.

    rewards: [B]; mask: [B, T] (a prefix of ones per row) -> [B, T]
    """
    lengths = mask.long().sum(-1)  # [B]
    out = torch.zeros(mask.shape, dtype=rewards.dtype, device=rewards.device)
    rows = torch.nonzero(lengths > 0).squeeze(-1)
    out[rows, lengths[rows] - 1] = rewards[rows]
    return out


def _returns(token_rewards: Tensor, mask: Tensor, gamma: float) -> Tensor:
    """G_t = sum_{s >= t} gamma^(s-t) r_s over the masked tokens. [B, T] -> [B, T]"""
    rewards = token_rewards * mask.to(token_rewards.dtype)
    out = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in range(rewards.shape[1] - 1, -1, -1):
        running = rewards[:, t] + gamma * running
        out[:, t] = running
    return out * mask.to(rewards.dtype)


def reinforce_pp_advantages(token_rewards: Tensor, mask: Tensor, gamma: float = 1.0) -> Tensor:
    """REINFORCE++: discounted returns, whitened over every valid token of the global batch.

    Hu 2025, "REINFORCE++" (arXiv:2501.03262): A_t = normalize(sum_{s>=t} gamma^(s-t) r_s), where
    r_s carries the outcome reward on the last token and any per-token KL penalty.
    token_rewards, mask: [B, T] -> [B, T]  (mask also drops the invalid samples)
    """
    return masked_whiten(_returns(token_rewards, mask, gamma), mask)


def reinforce_pp_baseline_advantages(
    rewards: Tensor, valid: Tensor, token_penalty: Tensor, mask: Tensor, gamma: float = 1.0
) -> Tensor:
    """REINFORCE++-baseline: subtract the group mean reward first, then REINFORCE++.

    Hu 2025 (arXiv:2501.03262), the variant for reasoning tasks with G samples per prompt: the
    group mean removes the prompt's difficulty, the global whitening sets the scale.
    rewards, valid: [P, G]; token_penalty, mask: [B, T] with B = P * G -> [B, T]
    """
    _, mean, _ = _group_stats(rewards, valid)
    centred = (rewards - mean).reshape(-1)  # [B]
    token_rewards = terminal_token_rewards(centred, mask) + token_penalty
    return reinforce_pp_advantages(token_rewards, mask, gamma)


def prime_advantages(
    outcome: Tensor,
    valid: Tensor,
    dense: Tensor,
    mask: Tensor,
    dense_coef: float = 1.0,
    outcome_coef: float = 1.0,
    gamma: float = 1.0,
) -> Tensor:
    """PRIME: leave-one-out baselines on dense (implicit PRM) and outcome rewards, then returns.

    Cui et al. 2025, "Process Reinforcement through Implicit Rewards" (arXiv:2502.01456), eq. 5:
    A_{i,t} = sum_{s>=t} gamma^(s-t) c_d (r^phi_{i,s} - b^phi_i) + c_o (r^o_i - b^o_i), where b^phi_i is the
    mean over the other samples j of the group of their average token reward, and b^o_i is the
    RLOO baseline of the outcome. The result is whitened over the batch's valid tokens.
    outcome, valid: [P, G]; dense, mask: [B, T] with B = P * G -> [B, T]
    """
    P, G = outcome.shape
    token_mask = mask.to(dense.dtype)  # [B, T]
    seq_mean = (dense * token_mask).sum(-1) / token_mask.sum(-1).clamp(min=1.0)  # [B]
    dense_baseline = _leave_one_out_mean(seq_mean.view(P, G), valid).reshape(-1, 1)  # b^phi_i: [B, 1]
    outcome_adv = rloo_advantages(outcome, valid).reshape(-1)  # [B]
    dense_adv = _returns(dense_coef * (dense - dense_baseline), mask, gamma)  # [B, T]
    total = dense_adv + outcome_coef * outcome_adv.unsqueeze(-1) * token_mask
    return masked_whiten(total, mask.bool() & valid.reshape(-1, 1))


def broadcast_to_tokens(advantages: Tensor, mask: Tensor) -> Tensor:
    """One advantage per sample on each of its tokens. advantages: [P, G] or [B]; mask: [B, T] -> [B, T]"""
    return advantages.reshape(-1, 1) * mask.to(advantages.dtype)
