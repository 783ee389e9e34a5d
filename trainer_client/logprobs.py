"""The trainer's own view of a rollout: log pi_train(y_t) of every response token, and entropy.

The sequence is laid out exactly as the rollout engine saw it (left-padded prompt, response,
positions counted over real tokens), so on the same weights the only difference from the
engine's log-probs is the kernels' round-off: that difference is what ``rollout/mismatch_kl``
measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from rewardhub.trainer.algorithms.entropy import entropy_from_logits
from rewardhub.trainer.rollout.hf import position_ids_for
from torch import Tensor

__all__ = ["TokenStats", "response_logprobs"]


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
