"""Chat replies from a local causal LM: constrained choices and free generation, batched.

A judge's requests arrive as a micro-batch, and on a GPU one generation pass over 32 prompts
costs about what one prompt costs, so they are answered together:

- requests that pick among fixed ``choices`` are answered by one log-likelihood pass over every
  (prompt + choice) sequence, the choice with the highest total log-probability winning;
- the rest are grouped by decoding settings and generated side by side, left-padded (see
  :mod:`~rewardhub.models.backends.padding`), each row cut at its own first end-of-sequence
  token (rows that finish early are filled with pads while the others go on).

A request with a plain ``prompt`` (a base model, no chat template) is tokenized as it is, with the
tokenizer's own special tokens. A request that cannot be prepared (chat messages for a tokenizer
without a chat template) is that request's error; a group that fails is its members' error; the other requests still get replies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..errors import BackendError
from .base import ChatReply, ChatRequest, TokenAlternatives
from .chunking import run_in_chunks
from .padding import left_pad, longest_first

if TYPE_CHECKING:
    from .transformers_backend import TransformersBackend

__all__ = ["chat_replies", "cut_at_eos", "eos_token_ids"]

Reply = ChatReply | Exception


def chat_replies(backend: TransformersBackend, requests: Sequence[ChatRequest]) -> list[Reply]:
    """One reply (or that request's exception) per request, in order."""
    replies: dict[int, Reply] = {}
    prompts: dict[int, list[int]] = {}
    for index, request in enumerate(requests):
        try:
            prompts[index] = _prompt_ids(backend, request)
        except BackendError as exc:
            replies[index] = exc
    choosing = [i for i in prompts if requests[i].choices]
    if choosing:
        _settle(
            replies, choosing, lambda: _choose(backend, [prompts[i] for i in choosing], [requests[i] for i in choosing])
        )
    groups: dict[tuple[int, float, int | None], list[int]] = {}
    for index in prompts:
        request = requests[index]
        if not request.choices:
            groups.setdefault((request.max_tokens, request.temperature, request.top_logprobs), []).append(index)
    for members in groups.values():
        _settle(replies, members, lambda m=members: _generate(backend, [prompts[i] for i in m], requests[m[0]]))
    return [replies[i] for i in range(len(requests))]


def _settle(replies: dict[int, Reply], members: list[int], compute: Callable[[], list[ChatReply]]) -> None:
    try:
        for index, reply in zip(members, compute(), strict=True):
            replies[index] = reply
    except BackendError as exc:
        for index in members:
            replies[index] = exc


def _prompt_ids(backend: TransformersBackend, request: ChatRequest) -> list[int]:
    if request.prompt is not None:  # a plain prompt: the tokenizer's own specials (a base model's BOS)
        ids = backend.tokenizer(request.prompt).input_ids
    else:
        prompt = backend.render_chat(request.message_dicts(), add_generation_prompt=True)
        ids = backend.tokenizer(prompt, add_special_tokens=False).input_ids  # the template has its specials
    if not ids:
        raise BackendError("the rendered judge prompt has no tokens")
    return list(ids)


def _choose(backend: TransformersBackend, prompts: list[list[int]], requests: list[ChatRequest]) -> list[ChatReply]:
    """Constrained decoding over a fixed set: the choice with the highest log-likelihood."""
    tokenizer = backend.tokenizer
    seqs: list[list[int]] = []
    starts: list[int] = []
    for prompt, request in zip(prompts, requests, strict=True):
        assert request.choices is not None
        for choice in request.choices:
            ids = tokenizer(choice, add_special_tokens=False).input_ids
            if not ids:
                raise BackendError(f"the choice {choice!r} has no tokens")
            seqs.append(prompt + list(ids))
            starts.append(len(prompt))
    logprobs = backend.token_logprobs(seqs, starts, batch_size=len(seqs))
    replies, position = [], 0
    for request in requests:
        assert request.choices is not None
        totals = [sum(lp) for lp in logprobs[position : position + len(request.choices)]]
        position += len(request.choices)
        best = max(range(len(totals)), key=totals.__getitem__)
        replies.append(ChatReply(text=request.choices[best], finish_reason="stop"))
    return replies


def _generate(backend: TransformersBackend, prompts: list[list[int]], request: ChatRequest) -> list[ChatReply]:
    """Generate for ``prompts`` with ``request``'s decoding settings, side by side."""
    model = backend.model("causal")
    tokenizer = backend.tokenizer
    eos = eos_token_ids(model, tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos[0] if eos else 0)
    sampling = request.temperature > 0
    options: dict[str, Any] = {
        "max_new_tokens": request.max_tokens,
        "do_sample": sampling,
        # sampling means the plain softmax at this temperature; greedy takes no sampling knobs
        "temperature": request.temperature if sampling else None,
        "top_p": 1.0 if sampling else None,
        "top_k": 0 if sampling else None,
        "pad_token_id": pad,
        "eos_token_id": eos or None,
        "output_logits": request.top_logprobs is not None,
        "return_dict_in_generate": True,
    }

    def attempt(rows: list[int]) -> list[ChatReply]:
        ids, mask = left_pad([prompts[i] for i in rows], pad)
        ids, mask = ids.to(backend.device), mask.to(backend.device)
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, **options)
            new = out.sequences[:, ids.shape[1] :].cpu().tolist()  # [B, steps]
            steps = _top_alternatives(tokenizer, out.logits, request.top_logprobs) if out.logits else None
        return [_reply(tokenizer, tokens, eos, steps, row) for row, tokens in enumerate(new)]

    def describe(rows: list[int]) -> str:
        return f"one {len(prompts[rows[0]])}-token prompt generating up to {request.max_tokens} tokens"

    done = run_in_chunks(longest_first(prompts), len(prompts), attempt, backend.release_cache, describe)
    return [done[i] for i in range(len(prompts))]


def _reply(
    tokenizer: Any, tokens: list[int], eos: Sequence[int], steps: list[list[TokenAlternatives]] | None, row: int
) -> ChatReply:
    kept, stopped = cut_at_eos(tokens, eos)
    logprobs = tuple(steps[s][row] for s in range(len(kept))) if steps is not None else None
    return ChatReply(
        text=tokenizer.decode(kept, skip_special_tokens=True),
        logprobs=logprobs,
        finish_reason="stop" if stopped else "length",
    )


def _top_alternatives(tokenizer: Any, logits: Sequence[torch.Tensor], k: int | None) -> list[list[TokenAlternatives]]:
    """Per generated step, per row: the ``k`` most likely tokens with their log-probabilities."""
    assert k is not None
    steps = []
    for step_logits in logits:  # [B, V] raw logits of one step
        top = torch.log_softmax(step_logits.float(), dim=-1).topk(min(k, step_logits.shape[-1]))
        values, indices = top.values.cpu().tolist(), top.indices.cpu().tolist()
        steps.append(
            [
                tuple(
                    (tokenizer.convert_tokens_to_string([token]), lp)
                    for token, lp in zip(tokenizer.convert_ids_to_tokens(ids), lps, strict=True)
                )
                for ids, lps in zip(indices, values, strict=True)
            ]
        )
    return steps


def cut_at_eos(tokens: Sequence[int], eos: Sequence[int]) -> tuple[list[int], bool]:
    """The tokens up to and including the first end-of-sequence token, and whether there was one."""
    stops = set(eos)
    for position, token in enumerate(tokens):
        if token in stops:
            return list(tokens[: position + 1]), True
    return list(tokens), False


def eos_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every token that ends a reply: the generation config's (chat models often list several,
    e.g. end-of-turn and end-of-text) and the tokenizer's."""
    ids: list[int] = []
    for value in (getattr(getattr(model, "generation_config", None), "eos_token_id", None), tokenizer.eos_token_id):
        if value is not None:
            ids.extend(value if isinstance(value, list | tuple) else [value])
    return sorted(set(ids))
