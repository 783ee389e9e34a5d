"""The trainer's own view of a rollout: log pi_train(y_t) of every response token, and entropy.

The sequence is laid out exactly as the rollout engine saw it (left-padded prompt, response,
positions counted over real tokens), so on the same weights the only difference from the
engine's log-probs is the kernels' round-off: that difference is what ``rollout/mismatch_kl``
measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .algorithms.entropy import entropy_from_logits
from .rollout.base import Rollout
from .rollout.hf import position_ids_for

__all__ = ["TokenStats", "first_micro_batch", "response_logprobs", "rollout_logprobs"]


@dataclass(frozen=True)
class TokenStats:
    logprobs: Tensor  # [B, Lr] log pi(y_t | context) at the sampling temperature
    entropy: Tensor | None  # [B, Lr] entropy of pi(. | context), when asked for


def response_logprobs(
    model: torch.nn.Module,
    prompt_ids: Tensor,  # [B, Lp]
    prompt_mask: Tensor,  # [B, Lp]
    response_ids: Tensor,  # [B, Lr]
    response_mask: Tensor,  # [B, Lr]
    temperature: float = 1.0,
    with_entropy: bool = False,
) -> TokenStats:
    """One forward pass over prompt + response; differentiable when grad is enabled.

    Logits are divided by the sampling temperature, as the engine did before sampling (top-k and
    top-p truncation are not reproduced: they are what the mismatch corrections are for).
    """
    input_ids = torch.cat([prompt_ids, response_ids], dim=1)  # [B, Lp + Lr]
    attention = torch.cat([prompt_mask, response_mask], dim=1)  # [B, Lp + Lr]
    width = response_ids.shape[1]
    out = model(
        input_ids=input_ids,
        attention_mask=attention.long(),
        position_ids=position_ids_for(attention),
        use_cache=False,
    )
    # the logit at position p predicts token p + 1: response token t is predicted at Lp - 1 + t
    logits = out.logits[:, -width - 1 : -1, :].float()  # [B, Lr, V]
    if temperature > 0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, response_ids.unsqueeze(-1)).squeeze(-1)  # [B, Lr]
    entropy = entropy_from_logits(logits) if with_entropy else None
    return TokenStats(logprobs=logp, entropy=entropy)


@torch.no_grad()
def rollout_logprobs(
    model: torch.nn.Module, rollout: Rollout, micro_batch_size: int | None, temperature: float, device: torch.device
) -> Tensor:
    """log pi(y_t) of a frozen model (the reference, or the policy before its update) over a whole rollout.

    Computed in micro-batches of the update's size, so it never needs more memory than the update.
    Returns [B, T] on the CPU.
    """
    out = []
    size = micro_batch_size or rollout.size
    for start in range(0, rollout.size, size):
        r = rollout.select(range(start, min(start + size, rollout.size)))
        stats = response_logprobs(
            model,
            r.prompt_ids.to(device),
            r.prompt_mask.to(device),
            r.response_ids.to(device),
            r.response_mask.to(device),
            temperature,
        )
        out.append(stats.logprobs.cpu())
    return torch.cat(out)


def first_micro_batch(
    model: torch.nn.Module, rollout: Rollout, micro_batch_size: int | None, temperature: float, device: torch.device
) -> TokenStats:
    """The update's first forward pass (with its autograd graph and entropy), run ahead of the update.

    The step runs it while the service is still scoring (:func:`rewardhub.trainer.step.collect`),
    so the reward latency hides behind it; :func:`~rewardhub.trainer.update.policy_update` then
    starts from it instead of recomputing.
    """
    size = micro_batch_size or rollout.size
    r = rollout.select(range(min(size, rollout.size)))
    return response_logprobs(
        model,
        r.prompt_ids.to(device),
        r.prompt_mask.to(device),
        r.response_ids.to(device),
        r.response_mask.to(device),
        temperature,
        with_entropy=True,
    )
