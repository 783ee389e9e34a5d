"""Backend for any OpenAI-compatible chat endpoint (a vLLM server, a hosted model), over httpx.

Only generation exists over this protocol, so this backend serves judges, not classifiers or
PRMs. Requests of one batch go out concurrently (``max_concurrency``); each failed request is
that sample's error, retried first on connection errors, 429 and 5xx. Constrained choices are
sent the way vLLM servers read them (``structured_outputs`` and the older ``guided_choice``);
a hosted API that rejects unknown fields should be used with ``verdict`` other than ``choices``.
A plain prompt (a base model's judge, ``chat_template: false``) goes to ``completions`` instead of
``chat/completions``: the server continues the text as it is, with no chat template.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from ..config import BackendSpec
from ..errors import BackendError
from .base import Backend, ChatReply, ChatRequest, TokenAlternatives

__all__ = ["OpenAIBackend"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class OpenAIBackend(Backend):
    def __init__(self, spec: BackendSpec, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(spec)
        if not spec.base_url:
            raise BackendError("backend 'openai' needs base_url, e.g. http://localhost:8000/v1")
        headers = {}
        key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            base_url=spec.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=spec.request_timeout_s,
            transport=transport,
        )
        self._pool = ThreadPoolExecutor(spec.max_concurrency, thread_name_prefix="rm-openai")
        self._max_retries = spec.max_retries

    def chat(self, requests: Sequence[ChatRequest]) -> list[ChatReply | Exception]:
        return list(self._pool.map(self._chat_safe, requests))

    def describe(self) -> dict[str, Any]:
        """The endpoint and the model name it serves; the weights and their dtype are the
        server's own, unknown from here (a vLLM server reports neither)."""
        return {
            "backend": "openai",
            "model": self.spec.model,
            "endpoint": self.spec.base_url,
            "weights": None,
            "dtype": "served",
        }

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self._client.close()

    def _chat_safe(self, request: ChatRequest) -> ChatReply | Exception:
        try:
            if request.prompt is not None:
                return parse_completion(self._post(completion_body(self.spec.model, request), "completions"))
            return parse_reply(self._post(chat_body(self.spec.model, request)))
        except BackendError as exc:
            return exc

    def _post(self, body: dict[str, Any], path: str = "chat/completions") -> dict[str, Any]:
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            try:
                response = self._client.post(path, json=body)
            except httpx.TransportError as exc:
                if last:
                    raise BackendError(f"judge endpoint {self.spec.base_url} unreachable: {exc!r}") from exc
            else:
                if response.status_code < 400:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise BackendError("judge endpoint answered with invalid JSON") from exc
                if last or response.status_code not in RETRY_STATUSES:
                    raise BackendError(f"judge endpoint answered HTTP {response.status_code}: {response.text[:300]}")
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")


def chat_body(model: str, request: ChatRequest) -> dict[str, Any]:
    """The chat-completions request body for one judge call."""
    body: dict[str, Any] = {
        "model": model,
        "messages": request.message_dicts(),
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if request.top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    if request.choices:
        body["structured_outputs"] = {"choice": list(request.choices)}
        body["guided_choice"] = list(request.choices)
    return body


def completion_body(model: str, request: ChatRequest) -> dict[str, Any]:
    """The completions request body for one plain-prompt judge call (the legacy protocol asks for
    top log-probabilities with one number)."""
    body: dict[str, Any] = {
        "model": model,
        "prompt": request.prompt,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if request.top_logprobs is not None:
        body["logprobs"] = request.top_logprobs
    if request.choices:
        body["structured_outputs"] = {"choice": list(request.choices)}
        body["guided_choice"] = list(request.choices)
    return body


def parse_completion(payload: dict[str, Any]) -> ChatReply:
    """A completions response as a :class:`ChatReply`: the text, and per generated token its top
    alternatives (``logprobs.top_logprobs``, one {token: log-probability} map per token)."""
    try:
        choice = payload["choices"][0]
        text = choice["text"]
        if not isinstance(text, str):
            raise TypeError("completion text is not a string")
        logprobs = None
        top = (choice.get("logprobs") or {}).get("top_logprobs")
        if top is not None:
            logprobs = tuple(tuple((str(token), float(lp)) for token, lp in step.items()) for step in top)
        return ChatReply(text=text, logprobs=logprobs, finish_reason=choice.get("finish_reason"))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise BackendError(f"malformed completion from judge endpoint: {exc!r}") from exc


def parse_reply(payload: dict[str, Any]) -> ChatReply:
    """A chat-completions response as a :class:`ChatReply`; a malformed one is a BackendError."""
    try:
        choice = payload["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("message content is not a string")
        logprobs = None
        content = (choice.get("logprobs") or {}).get("content")
        if content is not None:
            logprobs = tuple(_alternatives(entry) for entry in content)
        return ChatReply(text=text, logprobs=logprobs, finish_reason=choice.get("finish_reason"))
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise BackendError(f"malformed chat completion from judge endpoint: {exc!r}") from exc


def _alternatives(entry: dict[str, Any]) -> TokenAlternatives:
    top = entry.get("top_logprobs") or [entry]
    return tuple((str(alt["token"]), float(alt["logprob"])) for alt in top)
