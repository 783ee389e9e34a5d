"""OpenRLHF's remote reward protocol, the server side: ``POST /get_reward``.

OpenRLHF's ``--remote_rm_url http://host:8000/get_reward`` POSTs ``{"query", "prompts", "labels"}``
(lists; one sample per request in its current single-turn executor, whole micro-batches in older
versions) and reads ``rewards``, ``scores`` and ``extra_logs`` from the answer. The verifier is
the body's ``verifier`` (an extension OpenRLHF never sends; the in-process ``reward_func`` of
:mod:`rewardhub.integrations.openrlhf` does), else the ``get_reward_verifier`` setting.

OpenRLHF turns every ``extra_logs`` value into a tensor (``torch.as_tensor`` on the batched path,
``torch.tensor([value])`` on the single-sample one), so the logs carry numbers only
(:mod:`rewardhub.result_logs`); statuses, errors and details travel beside them as lists
OpenRLHF ignores. A sample that could not be judged gets the verifier's failure score as its
reward, and its status shows in ``extra_logs["status/..."]``: never a silent 0.

Its ``query`` is the decoded prompt + response, with the tokenizer's special tokens still in it
(left padding on the batched path, the end-of-sequence token after the response), and the prompt
may have been truncated from the left to fit. :func:`split_query` recovers the response.

The route is answered ahead of FastAPI's router by :mod:`rewardhub.api.middleware.hot_routes` (it is called
a thousand times a step); it is declared here so that grep and the OpenAPI schema find it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from rewardhub.api.body import parse_body, read_body
from rewardhub.api.deps import ServiceDep, require_key
from rewardhub.errors import InvalidRequest
from rewardhub.messages import as_reference
from rewardhub.result_logs import batch_logs
from rewardhub.types import Result, Sample, VerifierSpec

__all__ = [
    "OpenRLHFRequest",
    "get_reward",
    "openrlhf_answer",
    "openrlhf_samples",
    "router",
    "split_query",
    "strip_special_tokens",
]

router = APIRouter(dependencies=[Depends(require_key)])


class OpenRLHFRequest(BaseModel):
    """OpenRLHF's remote reward body. Extra keys are tolerated: OpenRLHF versions add fields."""

    model_config = ConfigDict(extra="allow")

    query: list[str] | str
    prompts: list[str] | str | None = None
    labels: list[Any] | Any = None
    verifier: VerifierSpec | None = None
    cache: bool | None = None  # as on /v1/score: true serves and stores cached verdicts


@router.post("/get_reward")
async def get_reward(request: Request, service: ServiceDep) -> JSONResponse:
    """OpenRLHF's remote reward protocol; the body's ``verifier``, else ``get_reward_verifier``, decides.

    Numbers only in ``extra_logs`` (OpenRLHF makes tensors of them): status rates and the
    per-component scores of a composite; statuses, errors and details ride beside them.
    """
    body = parse_body(await read_body(request, service.settings.max_request_bytes), OpenRLHFRequest)
    spec = body.verifier or service.settings.get_reward_verifier
    results = await service.pipeline.score(openrlhf_samples(body), spec, cache=body.cache)
    return JSONResponse(openrlhf_answer(results))


def openrlhf_samples(body: OpenRLHFRequest) -> list[Sample]:
    """OpenRLHF sends prompt+response as ``query``; the response is what follows the prompt.

    One sample may come as bare strings (its current single-sample mode sends one-element lists).
    """
    queries = body.query if isinstance(body.query, list) else [body.query]
    prompts = body.prompts if isinstance(body.prompts, list) else [body.prompts] * len(queries)
    labels = body.labels if isinstance(body.labels, list) else [body.labels] * len(queries)
    if len(prompts) != len(queries) or len(labels) != len(queries):
        raise InvalidRequest(
            f"query, prompts and labels differ in length ({len(queries)}, {len(prompts)}, {len(labels)})"
        )
    return [
        Sample(prompt=prompt, response=split_query(query, prompt), reference=_reference(label))
        for query, prompt, label in zip(queries, prompts, labels, strict=True)
    ]


def _reference(label: Any) -> Any:
    try:
        return as_reference(label)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


# Special tokens decoded into text: <|im_end|>, <|endoftext|>, <|eot_id|>, DeepSeek's fullwidth
# <｜end▁of▁sentence｜>, SentencePiece's </s>, Gemma's <end_of_turn>, BERT-style [PAD].
_SPECIAL = r"(?:<[|｜][^<>\s]{1,64}?[|｜]>|</s>|<s>|<eos>|<pad>|<end_of_turn>|\[PAD\]|\[SEP\]|\[CLS\])"
_TRAILING_SPECIAL = re.compile(rf"{_SPECIAL}\s*$")
_LEADING_SPECIAL = re.compile(rf"^(?:{_SPECIAL}\s*)+")
_PROMPT_TAILS = (256, 64, 16)  # how much of a (possibly truncated) prompt we look for in the query


def strip_special_tokens(text: str) -> str:
    """``text`` without the special tokens a decoder left at its end (EOS, padding).

    Peeled one token at a time from a short tail, so a long response costs no regex scan.
    """
    stripped = text.rstrip()
    while (found := _TRAILING_SPECIAL.search(stripped, max(0, len(stripped) - 80))) is not None:
        stripped = text = stripped[: found.start()].rstrip()
    return text


def split_query(query: str, prompt: str | None) -> str:
    """The response part of OpenRLHF's ``query`` (prompt + response as decoded tokens).

    Tried in order: the query starts with the prompt; the query starts with the prompt after
    leading special tokens (left padding); the end of the prompt occurs in the query (the prompt
    was truncated from the left, or decoding changed its start). When none holds the whole query,
    minus special tokens, is the response: a verifier then sees more than it should rather than
    nothing.
    """
    if prompt:
        for candidate in (query, _LEADING_SPECIAL.sub("", query)):
            if candidate.startswith(prompt):
                return strip_special_tokens(candidate[len(prompt) :])
        for size in _PROMPT_TAILS:
            tail = prompt[-size:]
            found = query.find(tail)
            if found >= 0:
                return strip_special_tokens(query[found + len(tail) :])
    return strip_special_tokens(_LEADING_SPECIAL.sub("", query))


def openrlhf_answer(results: Sequence[Result]) -> dict[str, Any]:
    """The JSON answer of ``/get_reward``: what OpenRLHF reads, plus statuses it does not."""
    return {
        "rewards": [r.score for r in results],
        "scores": [min(1.0, max(0.0, r.score)) for r in results],  # OpenRLHF's dynamic filtering reads 0-1 scores
        "extra_logs": batch_logs(results, shared_only=True),
        "status": [r.status for r in results],
        "error": [r.error for r in results],
        "details": [r.model_dump(mode="json")["details"] for r in results],
        "cached": [r.cached for r in results],  # the result field, per sample: served from the reward cache
    }
