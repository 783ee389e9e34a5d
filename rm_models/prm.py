"""``prm``: a discriminative process reward model's score for every reasoning step.

Two families of checkpoints are read the way their authors read them:

- ``qwen`` (Qwen2.5-Math-PRM): system, question and the steps joined by the ``<extra_0>``
  separator (one after each step) go through the chat template; a token-classification head's
  positive-class probability at each separator is that step's reward.
- ``math_shepherd`` (Math-Shepherd): "question step1 ки\\nstep2 ки" goes through a causal LM; at
  each tag the next-token probabilities of "+" and "-", renormalised over the two, give P(+).

The result's ``steps`` are those probabilities, ``score`` their aggregate (min, product, last or
mean) and ``details.first_error_step`` the first step below ``threshold`` (-1 when none). It
does not check the final answer against a reference; pair it with ``math`` for that.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample

from .backends import Backend, using_backend
from .base import ModelVerifier, check_length, score_prepared, with_model
from .config import ModelConfig, backend_spec
from .scoring import Aggregate, aggregate, first_below
from .steps import sample_steps

__all__ = ["ProcessRM", "single_token_id"]

QWEN_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."


class ProcessRM(ModelVerifier):
    """Process reward model: per-step correctness probabilities and their aggregate."""

    name: ClassVar[str] = "prm"
    version: ClassVar[str] = "1"

    class Config(ModelConfig):
        style: Literal["qwen", "math_shepherd"] = Field(
            "qwen",
            description="`qwen`: token classifier read at separators; `math_shepherd`: causal LM's +/- at step tags.",
        )
        step_delimiter: str = Field(
            "\n\n", description='Splits the response into steps unless metadata["steps"] is given.'
        )
        aggregate: Aggregate = Field(
            "min", description="How step rewards become the score: min, product, last, mean or sum."
        )
        threshold: float = Field(
            0.5, description="A step below this is an error; the first such index is details.first_error_step."
        )
        separator_token: str = Field("<extra_0>", description="`qwen`: the token placed after every step.")
        positive_label: int = Field(1, ge=0, description="`qwen`: the head's label index meaning 'step is correct'.")
        system_prompt: str | None = Field(QWEN_SYSTEM, description="`qwen`: the system message of the conversation.")
        step_tag: str = Field("ки", description="`math_shepherd`: the tag token after every step.")
        good_token: str = Field("+", description="`math_shepherd`: the token meaning 'step is correct'.")
        bad_token: str = Field("-", description="`math_shepherd`: the token meaning 'step is wrong'.")

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        with using_backend(backend_spec(config)) as backend:
            score = self._qwen if config.style == "qwen" else self._math_shepherd
            return list(with_model(score(backend, samples, config), backend, config))

    def _qwen(self, backend: Backend, samples: list[Sample], config: Config) -> list[Result]:
        sep = config.separator_token
        sep_id = single_token_id(backend.tokenizer, sep)

        def prepare(sample: Sample) -> tuple[list[int], int]:
            steps = sample_steps(sample, config.step_delimiter, strip_tags=(sep,))
            turns = [
                {"role": "user", "content": sample.prompt_text().replace(sep, "")},
                {"role": "assistant", "content": sep.join(steps) + sep},
            ]
            if config.system_prompt:
                turns.insert(0, {"role": "system", "content": config.system_prompt})
            text = backend.render_chat(turns, add_generation_prompt=False)
            ids = backend.tokenizer(text, add_special_tokens=False).input_ids
            check_length(ids, config.max_length)
            return ids, len(steps)

        def run(batch: list[tuple[list[int], int]]) -> list[Result]:
            rows = backend.step_label_probs([ids for ids, _ in batch], sep_id, config.batch_size)
            return [
                _step_result([row[config.positive_label] for row in probs], n, config)
                for probs, (_, n) in zip(rows, batch, strict=True)
            ]

        return score_prepared(samples, config.failure_score, prepare, run)

    def _math_shepherd(self, backend: Backend, samples: list[Sample], config: Config) -> list[Result]:
        tag = config.step_tag
        tokenizer = backend.tokenizer
        tag_id = single_token_id(tokenizer, tag)
        candidates = [single_token_id(tokenizer, config.good_token), single_token_id(tokenizer, config.bad_token)]

        def prepare(sample: Sample) -> tuple[list[int], int]:
            steps = sample_steps(sample, config.step_delimiter, strip_tags=(tag,))
            text = sample.prompt_text().replace(tag, "") + " " + "\n".join(f"{step} {tag}" for step in steps)
            ids = tokenizer(text).input_ids
            check_length(ids, config.max_length)
            return ids, len(steps)

        def run(batch: list[tuple[list[int], int]]) -> list[Result]:
            rows = backend.step_token_probs([ids for ids, _ in batch], tag_id, candidates, config.batch_size)
            return [
                _step_result([row[0] for row in probs], n, config) for probs, (_, n) in zip(rows, batch, strict=True)
            ]

        return score_prepared(samples, config.failure_score, prepare, run)


def _step_result(step_scores: list[float], n_steps: int, config: ProcessRM.Config) -> Result:
    if len(step_scores) != n_steps:
        # Only possible if the tokenizer merged a tag with its neighbours: say so, never guess.
        return Result.failed(f"found {len(step_scores)} step tags for {n_steps} steps", score=config.failure_score)
    return Result.ok(
        aggregate(step_scores, config.aggregate),
        steps=step_scores,
        first_error_step=first_below(step_scores, config.threshold),
        n_steps=n_steps,
    )


def single_token_id(tokenizer: Any, token: str) -> int:
    """The id of ``token`` when it is exactly one token; a tag split in pieces cannot be read."""
    ids = tokenizer(token, add_special_tokens=False).input_ids
    if len(ids) != 1:
        raise VerifierError(f"{token!r} is {len(ids)} tokens for this tokenizer; a step tag must be exactly one")
    return int(ids[0])
