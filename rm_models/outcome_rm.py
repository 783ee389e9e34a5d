"""``outcome_rm``: one scalar for the whole response from a sequence-classification reward model.

For Bradley-Terry reward models in the Skywork-Reward style: the conversation (prompt turns, then
the response as the assistant turn) goes through the model's chat template, and the head's logit
at the last token is the reward, reported raw, standardised or squashed by a sigmoid as
configured. It judges preference-model quality of the whole answer; it does not check
correctness, give per-step rewards (see ``prm``) or read a reference.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from rewardhub.types import Result, Sample

from .backends import Backend, using_backend
from .base import ModelVerifier, chat_turns, check_length, score_prepared, with_model
from .config import ModelConfig, backend_spec
from .errors import BackendError
from .scoring import normalise_outcome

__all__ = ["OutcomeRM"]


class OutcomeRM(ModelVerifier):
    """Outcome reward model: a sequence classifier's logit for (prompt, response)."""

    name: ClassVar[str] = "outcome_rm"
    version: ClassVar[str] = "1"

    class Config(ModelConfig):
        normalize: Literal["raw", "standardize", "sigmoid"] = Field(
            "raw",
            description="`raw` logit, `standardize` (s - mean) / std, or `sigmoid` of that; a bare sigmoid saturates BT logits.",
        )
        mean: float = Field(0.0, description="Subtracted from the logit by `standardize` and `sigmoid`.")
        std: float = Field(1.0, gt=0, description="Divides the centred logit for `standardize` and `sigmoid`.")
        label_index: int = Field(0, ge=0, description="Which output of the head is the reward (0 for one-label heads).")
        chat_template: bool = Field(
            True, description="Apply the model's chat template; otherwise prompt and response joined by a newline."
        )
        system_prompt: str | None = Field(None, description="System message put first in the conversation, if any.")

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        with using_backend(backend_spec(config)) as backend:
            return self._score(backend, samples, config)

    def _score(self, backend: Backend, samples: list[Sample], config: Config) -> list[Result | float]:
        def prepare(sample: Sample) -> list[int]:
            if config.chat_template:
                text = backend.render_chat(chat_turns(sample, system=config.system_prompt), add_generation_prompt=False)
                ids = backend.tokenizer(text, add_special_tokens=False).input_ids  # the template has its specials
            else:
                text = f"{sample.prompt_text()}\n{sample.response}" if sample.prompt is not None else sample.response
                ids = backend.tokenizer(text).input_ids
            check_length(ids, config.max_length)
            return ids

        def run(batch: list[list[int]]) -> list[Result]:
            logits = backend.classify(batch, config.batch_size)
            return [self._result(row, config) for row in logits]

        return list(with_model(score_prepared(samples, config.failure_score, prepare, run), backend, config))

    @staticmethod
    def _result(logits: list[float], config: Config) -> Result:
        if config.label_index >= len(logits):
            raise BackendError(f"label_index={config.label_index} but the head has {len(logits)} outputs")
        raw = float(logits[config.label_index])
        return Result.ok(normalise_outcome(raw, config.normalize, config.mean, config.std), raw=raw)
