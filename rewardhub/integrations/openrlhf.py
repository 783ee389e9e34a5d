"""OpenRLHF: its remote reward protocol, on the server side and as a ``reward_func``.

OpenRLHF asks for rewards in two ways, and both end up here:

- ``--remote_rm_url http://host:8000/get_reward``: it POSTs ``{"query", "prompts", "labels"}``
  (lists; one sample per request in its current single-turn executor, whole micro-batches in
  older versions) and reads ``rewards``, ``scores`` and ``extra_logs`` from the answer;
- ``--remote_rm_url rewardhub/integrations/openrlhf_reward_func.py``: it imports that file and
  calls ``reward_func(queries, prompts, labels)``, which calls the service from the trainer.

OpenRLHF turns every ``extra_logs`` value into a tensor (``torch.as_tensor`` on the batched path,
``torch.tensor([value])`` on the single-sample one), so the logs carry numbers only
(:mod:`rewardhub.integrations.logs`); statuses, errors and details travel beside them as lists
OpenRLHF ignores. A sample that could not be judged gets the verifier's failure score as its
reward, and its status shows in ``extra_logs["status/..."]``: never a silent 0.

Its ``query`` is the decoded prompt + response, with the tokenizer's special tokens still in it
(left padding on the batched path, the end-of-sequence token after the response), and the prompt
may have been truncated from the left to fit. :func:`split_query` recovers the response.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rewardhub.integrations.common import as_reference, service_spec, shared_client, verifier_spec
from rewardhub.integrations.logs import batch_logs
from rewardhub.types import Result, Sample

__all__ = ["openrlhf_answer", "openrlhf_samples", "reward_func", "split_query", "strip_special_tokens"]

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


def openrlhf_samples(queries: Sequence[str], prompts: Sequence[str | None], labels: Sequence[Any]) -> list[Sample]:
    return [
        Sample(prompt=prompt, response=split_query(query, prompt), reference=as_reference(label))
        for query, prompt, label in zip(queries, prompts, labels, strict=True)
    ]


def openrlhf_answer(results: Sequence[Result]) -> dict[str, Any]:
    """The JSON answer of ``/get_reward``: what OpenRLHF reads, plus statuses it does not."""
    return {
        "rewards": [r.score for r in results],
        "scores": [min(1.0, max(0.0, r.score)) for r in results],  # OpenRLHF's dynamic filtering reads 0-1 scores
        "extra_logs": batch_logs(results, shared_only=True),
        "status": [r.status for r in results],
        "error": [r.error for r in results],
        "details": [r.model_dump(mode="json")["details"] for r in results],
    }


# --- the trainer side: reward_func for ``--remote_rm_url path/to/openrlhf_reward_func.py`` ------


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's ``reward_func(queries, prompts, labels)``, answered by the service.

    The service is found at ``REWARDHUB_URL`` (``REWARDHUB_API_KEY`` for its key). With
    ``REWARDHUB_VERIFIER`` set (a verifier name, or a JSON VerifierSpec) the samples are scored by
    that spec through ``/v1/score``; without it they go to ``/get_reward`` and the server's
    ``get_reward_verifier`` decides. Returns tensors, as OpenRLHF's examples do: ``rewards``,
    ``scores`` (clipped to 0-1) and numeric ``extra_logs``. A service that cannot be reached or
    refuses the request raises: OpenRLHF then logs the failure instead of training on a made-up 0.
    OpenRLHF calls it from many threads at once; they share one client (per service and process).
    """
    import torch

    client = shared_client(service_spec())
    spec = verifier_spec()
    labels = [as_reference(label) for label in labels] if labels is not None else [None] * len(queries)
    if spec is None:
        body = {"query": list(queries), "prompts": list(prompts), "labels": labels}
        answer = client.request("POST", "/get_reward", body)
    else:
        samples = openrlhf_samples(queries, prompts, labels)
        answer = openrlhf_answer(client.score(samples, spec))
    return {
        "rewards": torch.tensor(answer["rewards"], dtype=torch.float32),
        "scores": torch.tensor(answer["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in answer["extra_logs"].items()},
    }
