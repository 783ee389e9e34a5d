"""The one interface every model backend offers to the verifiers.

Verifiers build text and token ids; backends only run models. Inputs are token-id lists so that
the verifier, which knows where the step separators are, also knows which positions to read, and
so that padding and truncation are decided in one place. Each operation takes a whole batch:
that is where the device time is saved.

A backend that cannot do an operation (a classifier over HTTP, say) raises
:class:`~rewardhub.models.errors.UnsupportedOperation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import BackendSpec
from ..errors import UnsupportedOperation
from ..kit import weights_hash

__all__ = ["Backend", "ChatReply", "ChatRequest", "TokenAlternatives"]

TokenAlternatives = tuple[tuple[str, float], ...]
"""The most likely tokens at one generated position, as (token text, log-probability)."""


@dataclass(frozen=True)
class ChatRequest:
    """One judge call: chat messages (or one plain-text prompt) and how to decode."""

    messages: tuple[tuple[str, str], ...]  # (role, content); empty when ``prompt`` is given
    max_tokens: int = 1024
    temperature: float = 0.0
    top_logprobs: int | None = None
    """Ask for this many alternatives per generated token (verdict-token probabilities)."""
    choices: tuple[str, ...] | None = None
    """Constrain the output to exactly one of these strings, where the backend can."""
    prompt: str | None = None
    """The whole prompt as plain text, continued as it is, with no chat template: how a base model
    (one without a chat template) is asked. A backend sends it as a completion, never as a chat."""

    def __post_init__(self) -> None:
        if (self.prompt is None) == (not self.messages):
            raise ValueError("a ChatRequest carries chat messages or a plain prompt: exactly one of the two")

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True)
class ChatReply:
    text: str
    logprobs: tuple[TokenAlternatives, ...] | None = None
    """Per generated token, its alternatives (when ``top_logprobs`` was asked for)."""
    finish_reason: str | None = None


class Backend:
    """A loaded (or lazily loadable) model. Instances are shared per process: see ``get_backend``."""

    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec

    def _unsupported(self, what: str) -> UnsupportedOperation:
        return UnsupportedOperation(f"backend {self.spec.backend!r} cannot {what} (model {self.spec.model!r})")

    @property
    def tokenizer(self) -> Any:
        """The model's Hugging Face tokenizer."""
        raise self._unsupported("provide a tokenizer")

    def classify(self, batch: Sequence[Sequence[int]], batch_size: int) -> list[list[float]]:
        """Sequence classification: the raw logits (no sigmoid, no softmax) per sequence."""
        raise self._unsupported("run a sequence classifier")

    def step_label_probs(self, batch: Sequence[Sequence[int]], tag_id: int, batch_size: int) -> list[list[list[float]]]:
        """Token classification read at every position holding ``tag_id``: label probabilities per tag."""
        raise self._unsupported("run a token classifier")

    def step_token_probs(
        self, batch: Sequence[Sequence[int]], tag_id: int, candidate_ids: Sequence[int], batch_size: int
    ) -> list[list[list[float]]]:
        """Causal LM at every position holding ``tag_id``: next-token probabilities over
        ``candidate_ids`` only (softmax of their logits), per tag."""
        raise self._unsupported("read next-token probabilities")

    def token_logprobs(
        self, batch: Sequence[Sequence[int]], starts: Sequence[int], batch_size: int
    ) -> list[list[float]]:
        """Causal LM: log π(x_t | x_<t) for t from ``starts[i]`` to the end of sequence i."""
        raise self._unsupported("compute token log-probabilities")

    def chat(self, requests: Sequence[ChatRequest]) -> list[ChatReply | Exception]:
        """Generate one reply per request; a failed request is its exception, not the batch's."""
        raise self._unsupported("generate chat replies")

    def describe(self) -> dict[str, Any]:
        """Who answers: the backend, the model as loaded, its weights hash (see
        :func:`rewardhub.models.kit.weights_hash`; None where the weights cannot be read, as
        behind an HTTP endpoint) and the dtype it runs in. Verdict details carry it so a verdict
        names the weights that gave it; a backend that knows more (its resolved dtype, an
        engine's version) overrides this and adds to it."""
        return {
            "backend": self.spec.backend,
            "model": self.spec.model,
            "weights": weights_hash(self.spec.model),
            "dtype": self.spec.dtype,
        }

    def close(self) -> None:
        """Free what the backend holds outside Python's reach (an engine's processes). A backend
        with nothing of the kind (weights in this process, an HTTP client) has nothing to do."""

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool) -> str:
        """The model's chat template applied to ``messages``, as text."""
        tokenizer = self.tokenizer
        if not getattr(tokenizer, "chat_template", None):
            raise UnsupportedOperation(
                f"tokenizer of {self.spec.model!r} has no chat template; set chat_template=false in the config"
            )
        return tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=add_generation_prompt
        )
