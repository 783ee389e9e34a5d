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
from .rollout.base import Rollout, distinct_prompts
from .rollout.hf import forward_kwargs, position_ids_for

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
    """log pi(y_t | context) of every response token, from the logits of the positions that predict
    them; differentiable when grad is enabled.

    Logits are divided by the sampling temperature, as the engine did before sampling (top-k and
    top-p truncation are not reproduced: they are what the mismatch corrections are for).
    """
    logits = _response_logits(model, prompt_ids, prompt_mask, response_ids, response_mask).float()  # [B, Lr, V]
    if temperature > 0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, response_ids.unsqueeze(-1)).squeeze(-1)  # [B, Lr]
    entropy = entropy_from_logits(logits) if with_entropy else None
    return TokenStats(logprobs=logp, entropy=entropy)


def _response_logits(
    model: torch.nn.Module, prompt_ids: Tensor, prompt_mask: Tensor, response_ids: Tensor, response_mask: Tensor
) -> Tensor:
    """The logits that predict each response token.  -> [B, Lr, V]

    Two savings, each exact up to round-off (tests/trainer/test_logprobs.py):

    - Only the positions that predict a response token go through the output layer (transformers'
      ``logits_to_keep``): with a short answer after a long prompt, as in most RL tasks, the prompt's
      logits were most of the vocabulary projection's work and memory, forward and backward.
    - A prompt that several rows share (a GRPO group: every completion of one prompt) is run once.
      Under a causal mask a prompt's hidden states do not depend on what follows it, so its keys and
      values are computed for each distinct prompt and copied to its rows, and only the responses
      run per row; gradients flow back through the copies into the one prompt pass. With groups of
      4, a 47-token prompt and 12-token answers, the pass reads 760 positions instead of 1,888.
    """
    attention = torch.cat([prompt_mask, response_mask], dim=1)  # [B, Lp + Lr]
    positions = position_ids_for(attention)
    shared = distinct_prompts(prompt_ids, prompt_mask) if response_ids.shape[1] and _shares_prompts(model) else None
    if shared is None:
        return _whole_rows(model, prompt_ids, response_ids, attention, positions)
    return _prompts_once(model, prompt_ids, response_ids, attention, positions, *shared)


def _whole_rows(
    model: torch.nn.Module, prompt_ids: Tensor, response_ids: Tensor, attention: Tensor, positions: Tensor
) -> Tensor:
    """One pass over each row's prompt and response.  -> [B, Lr, V]"""
    width = response_ids.shape[1]
    _, keep = forward_kwargs(model)
    out = model(
        input_ids=torch.cat([prompt_ids, response_ids], dim=1),
        attention_mask=attention.long(),
        position_ids=positions,
        use_cache=False,
        **({"logits_to_keep": width + 1} if keep else {}),
    )
    # the logit at position p predicts token p + 1: response token t is predicted at Lp - 1 + t
    return out.logits[:, -width - 1 : -1, :]


def _prompts_once(
    model: torch.nn.Module, prompt_ids: Tensor, response_ids: Tensor, attention: Tensor, positions: Tensor,
    index: Tensor, first: Tensor,
) -> Tensor:  # fmt: skip
    """One pass over each distinct prompt (rows ``first``), its keys and values copied to its rows
    (``index``), then one pass over the responses.  -> [B, Lr, V]"""
    width, lp = response_ids.shape[1], prompt_ids.shape[1]
    cache_arg, keep = forward_kwargs(model)
    prompts = model(
        input_ids=prompt_ids[first],
        attention_mask=attention[first, :lp].long(),
        position_ids=positions[first, :lp],
        use_cache=True,
        **({"logits_to_keep": 1} if keep else {}),
    )
    cache = getattr(prompts, cache_arg)  # the output's field is named as the argument is
    cache.batch_select_indices(index)  # row i reads its prompt's keys and values
    answers = model(
        input_ids=response_ids,
        attention_mask=attention.long(),
        position_ids=positions[:, lp:],
        use_cache=True,
        **{cache_arg: cache},
        **({"logits_to_keep": width} if keep else {}),
    )
    opening = prompts.logits[:, -1:, :][index]  # [B, 1, V]: a prompt's last position predicts token 0
    return torch.cat([opening, answers.logits[:, : width - 1, :]], dim=1)


def _shares_prompts(model: torch.nn.Module) -> bool:
    """Whether the prompt pass can hand its keys and values to the response pass: transformers turns
    the cache off under activation checkpointing, which recomputes the layers without it."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    current = hasattr(type(base), "is_activation_checkpointing")  # its older name before transformers 5.2x
    return not getattr(base, "is_activation_checkpointing" if current else "is_gradient_checkpointing", False)


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
