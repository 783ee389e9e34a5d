"""Turning next-token logits into the distribution a token is drawn from.

Kept apart so the CPU engine and any test can see exactly which distribution the behaviour
log-probs refer to: the temperature-scaled, top-k/top-p-truncated one, renormalised.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["sampling_logprobs"]


def sampling_logprobs(logits: Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> Tensor:
    """Log-probabilities of the sampling distribution.  [B, V] -> [B, V] (float32, -inf where cut)

    Greedy decoding (``temperature == 0``) is the argmax with probability 1.
    """
    z = logits.float()
    if temperature == 0.0:
        out = torch.full_like(z, float("-inf"))
        return out.scatter(-1, z.argmax(-1, keepdim=True), 0.0)
    z = z / temperature
    if top_k > 0 and top_k < z.shape[-1]:
        kth = torch.topk(z, top_k, dim=-1).values[:, -1:]  # [B, 1]
        z = z.masked_fill(z < kth, float("-inf"))
    if top_p < 1.0:
        sorted_z, order = torch.sort(z, dim=-1, descending=True)
        cumulative = torch.softmax(sorted_z, dim=-1).cumsum(-1)
        # drop a token when the tokens before it already reach top_p (the first one always stays)
        drop_sorted = (cumulative - torch.softmax(sorted_z, dim=-1)) >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        z = z.masked_fill(drop, float("-inf"))
    return torch.log_softmax(z, dim=-1)
