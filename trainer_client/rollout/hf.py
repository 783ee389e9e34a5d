"""Rollouts on CPU (or any torch device) with a transformers causal LM and a key-value cache.

The engine samples with the policy it was given (the very module the trainer updates, so there
is no weight copy to sync) and records the log-probability of each token under the distribution
it drew it from. A plain sampling loop rather than ``model.generate``: it is shorter than the
options ``generate`` would need to return those log-probs, and it avoids ``generate``'s per-call
set-up cost, which dominates for the tiny models this path exists for. For Llama-family
architectures the forward passes themselves go through :mod:`~rewardhub.trainer.rollout.lean_decoder`
(``lean=False``, or any other architecture, uses the transformers forward with its KV cache).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence

import torch
from torch import Tensor
from transformers import DynamicCache, PreTrainedModel, PreTrainedTokenizerBase

from .base import Rollout, SamplingParams, concat_rollouts, left_pad
from .lean_decoder import LeanDecoder, lean_decoder_for
from .sampling import sampling_logprobs

__all__ = ["HFRolloutEngine", "position_ids_for"]


def position_ids_for(attention_mask: Tensor) -> Tensor:
    """0, 1, 2, ... over the real tokens of left-padded rows (pads get 0).  [B, L] -> [B, L]"""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def forward_kwargs(model: torch.nn.Module) -> tuple[str, bool]:
    """The name of the cache argument (``cache`` in transformers >= 5.2x, else ``past_key_values``)
    and whether ``logits_to_keep`` is accepted."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft passes kwargs through
    return _forward_kwargs_of(type(base))


@functools.cache
def _forward_kwargs_of(cls: type) -> tuple[str, bool]:
    params = inspect.signature(cls.forward).parameters
    cache_name = "cache" if "cache" in params else "past_key_values"
    return cache_name, "logits_to_keep" in params


class HFRolloutEngine:
    """Samples from ``model`` in place; ``sync_weights`` has nothing to do."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        generator: torch.Generator | None = None,
        batch_size: int | None = None,
        lean: bool = True,
    ) -> None:
        self.model = model
        self.lean = lean
        self.tokenizer = tokenizer
        self.generator = generator
        self.batch_size = batch_size
        self.eos_ids = _eos_ids(model, tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_ids[0]
        self._cache_arg, self._has_logits_to_keep = forward_kwargs(model)

    def sync_weights(self) -> None:
        """The engine samples with the trained module itself: nothing to copy."""

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> Rollout:
        size = self.batch_size or max(len(prompts), 1)
        parts = [self._generate(prompts[i : i + size], params) for i in range(0, len(prompts), size)]
        return concat_rollouts(parts, self.pad_id)

    @torch.no_grad()
    def _generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> Rollout:
        width = max((len(p) for p in prompts), default=0)
        lean = lean_decoder_for(self.model, width + params.max_new_tokens) if self.lean else None
        if lean is not None:  # no dropout or other train-mode behaviour to switch off
            return self._sample(prompts, params, lean)
        was_training = self.model.training
        self.model.eval()
        try:
            return self._sample(
                prompts, params, _TransformersDecoder(self.model, self._cache_arg, self._has_logits_to_keep)
            )
        finally:
            self.model.train(was_training)

    def _sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams, decoder: LeanDecoder | _TransformersDecoder
    ) -> Rollout:
        device = next(self.model.parameters()).device
        prompt_ids, prompt_mask = (t.to(device) for t in left_pad(prompts, self.pad_id))
        batch = prompt_ids.shape[0]
        eos = torch.as_tensor(self.eos_ids, device=device)
        logits = decoder.prefill(prompt_ids, prompt_mask, params.max_new_tokens)
        tokens: list[Tensor] = []
        logps: list[Tensor] = []
        tops: list[Tensor] = []
        alive = torch.ones(batch, dtype=torch.bool, device=device)
        for t in range(params.max_new_tokens):
            if params.top_logprobs:  # the policy's distribution at the sampling temperature, untruncated
                scaled = torch.log_softmax(logits.float() / (params.temperature or 1.0), dim=-1)
                top = scaled.topk(params.top_logprobs, dim=-1).values  # [B, k]
                tops.append(torch.where(alive.unsqueeze(-1), top, 0.0))
            logp = sampling_logprobs(logits, params.temperature, params.top_k, params.top_p)  # [B, V]
            token = torch.multinomial(logp.exp(), 1, generator=self.generator).squeeze(-1)  # [B]
            token = torch.where(alive, token, torch.full_like(token, self.pad_id))
            tokens.append(token)
            logps.append(torch.where(alive, logp.gather(-1, token.unsqueeze(-1)).squeeze(-1), 0.0))
            alive = alive & ~torch.isin(token, eos)
            if not alive.any() or t + 1 == params.max_new_tokens:
                break
            logits = decoder.decode(token)
        response_ids = torch.stack(tokens, dim=1) if tokens else torch.zeros((batch, 0), dtype=torch.long)
        logprobs = torch.stack(logps, dim=1) if logps else torch.zeros((batch, 0))
        response_mask = _response_mask(response_ids, eos)
        top_logprobs = None
        if params.top_logprobs:
            top_logprobs = torch.stack(tops, dim=1) if tops else torch.zeros((batch, 0, params.top_logprobs))
        return Rollout(
            prompt_ids=prompt_ids.cpu(),
            prompt_mask=prompt_mask.cpu(),
            response_ids=response_ids.cpu(),
            response_mask=response_mask.cpu(),
            logprobs=logprobs.float().cpu(),
            truncated=alive.cpu(),
            texts=tuple(self.tokenizer.batch_decode(response_ids.cpu().tolist(), skip_special_tokens=True)),
            top_logprobs=None if top_logprobs is None else top_logprobs.float().cpu(),
        )


class _TransformersDecoder:
    """The model's own forward with a transformers KV cache, behind the lean decoder's interface."""

    def __init__(self, model: torch.nn.Module, cache_arg: str, has_logits_to_keep: bool) -> None:
        self.model = model
        self.cache = _new_cache(model)
        self.kwargs: dict = {cache_arg: self.cache, "use_cache": True}
        if has_logits_to_keep:
            self.kwargs["logits_to_keep"] = 1
        self.attention: Tensor | None = None
        self.next_pos: Tensor | None = None

    def prefill(self, prompt_ids: Tensor, prompt_mask: Tensor, max_new_tokens: int) -> Tensor:
        """-> [B, V] logits of the last prompt position."""
        self.attention = prompt_mask.long()
        self.next_pos = prompt_mask.long().sum(-1, keepdim=True)  # [B, 1]
        return self._step(prompt_ids, position_ids_for(prompt_mask))

    def decode(self, tokens: Tensor) -> Tensor:
        """Append ``tokens`` [B]; -> [B, V] next-token logits."""
        assert self.attention is not None and self.next_pos is not None, "decode() before prefill()"
        self.attention = torch.cat([self.attention, torch.ones_like(self.attention[:, :1])], dim=-1)
        position = self.next_pos
        self.next_pos = self.next_pos + 1
        return self._step(tokens.unsqueeze(-1), position)

    def _step(self, input_ids: Tensor, position_ids: Tensor) -> Tensor:
        out = self.model(input_ids=input_ids, attention_mask=self.attention, position_ids=position_ids, **self.kwargs)
        return out.logits[:, -1, :]


def _new_cache(model: torch.nn.Module) -> DynamicCache:
    try:
        return DynamicCache(config=model.config)
    except TypeError:  # transformers before 4.56 builds it without the config
        return DynamicCache()


def _response_mask(response_ids: Tensor, eos: Tensor) -> Tensor:
    """True up to and including the first EOS of each row.  [B, Lr] -> [B, Lr] bool"""
    is_eos = torch.isin(response_ids, eos)
    seen_before = (is_eos.long().cumsum(-1) - is_eos.long()) > 0  # an EOS strictly earlier
    return ~seen_before


def _eos_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    ids: list[int] = []
    for source in (getattr(model, "generation_config", None), model.config):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if value is not None:
            ids.extend(value if isinstance(value, list) else [value])
    if tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    if not ids:
        raise ValueError("the model and tokenizer define no end-of-sequence token")
    return sorted(set(ids))
