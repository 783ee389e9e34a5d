"""``implicit_prm``: PRIME's implicit process reward from a policy LM and a reference LM.

An outcome-trained language model π_φ defines a process reward without step labels
(Yuan et al. 2024, "Free Process Rewards without Process Labels"; Cui et al. 2025, PRIME,
arXiv 2502.01456): the reward of response token y_t is

    r_t = β · log( π_φ(y_t | y_<t) / π_ref(y_t | y_<t) )

Token-level rewards are reported as they are; step-level rewards difference the running sum
q_t = Σ_{i≤t} r_i at step ends, i.e. sum the token rewards inside each step. The score is their
min or sum. When π_φ and π_ref are the same model every reward is exactly 0. It does not read a
reference or check the final answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample

from .backends import Backend, using_backend
from .base import ModelVerifier, chat_turns, check_length, score_prepared, with_model
from .config import ModelConfig, backend_spec
from .errors import BackendError
from .scoring import aggregate, implicit_token_rewards, step_sums

__all__ = ["ImplicitPRM", "token_steps"]


@dataclass(frozen=True)
class _Prepared:
    ids: list[int]
    start: int  # index of the first response token in ids
    token_steps: list[int]
    n_steps: int


class ImplicitPRM(ModelVerifier):
    """Implicit PRM (PRIME): β-scaled log-likelihood ratio of a policy LM over a reference LM."""

    name: ClassVar[str] = "implicit_prm"
    version: ClassVar[str] = "1"

    class Config(ModelConfig):
        ref_model: str = Field(
            description="Local path or hub id of the reference LM π_ref (same tokenizer as `model`)."
        )
        beta: float = Field(0.05, gt=0, description="β scaling the log-likelihood ratio (PRIME uses 0.05).")
        granularity: Literal["token", "step"] = Field("token", description="Rewards per token, or summed per step.")
        aggregate: Literal["min", "sum"] = Field("min", description="How token or step rewards become the score.")
        step_delimiter: str = Field("\n\n", description="Separates steps for `step` granularity.")
        chat_template: bool = Field(
            True, description="Render the prompt with the chat template (with the assistant header)."
        )

    def __init__(self) -> None:
        self._same_vocab: dict[tuple[str, str], bool] = {}

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        with (
            using_backend(backend_spec(config)) as policy,
            using_backend(backend_spec(config, model=config.ref_model)) as ref,
        ):
            return self._score(policy, ref, samples, config)

    def _score(self, policy: Backend, ref: Backend, samples: list[Sample], config: Config) -> list[Result | float]:
        self._check_vocab(policy, ref)
        tokenizer = policy.tokenizer

        def prepare(sample: Sample) -> _Prepared:
            if config.chat_template:
                prompt = policy.render_chat(chat_turns(sample)[:-1], add_generation_prompt=True)
                prompt_ids = tokenizer(prompt, add_special_tokens=False).input_ids
            else:
                prompt_ids = tokenizer(sample.prompt_text()).input_ids
            response = tokenizer(sample.response, add_special_tokens=False, return_offsets_mapping=True)
            if not response.input_ids:
                raise VerifierError("the response has no tokens to reward")
            if not prompt_ids:
                raise VerifierError("the prompt is empty and the tokenizer adds no BOS: the first token has no context")
            ids = prompt_ids + response.input_ids
            check_length(ids, config.max_length)
            steps, n_steps = token_steps(
                [s for s, _ in response.offset_mapping], sample.response, config.step_delimiter
            )
            return _Prepared(ids, len(prompt_ids), steps, n_steps)

        def run(batch: list[_Prepared]) -> list[Result]:
            ids, starts = [p.ids for p in batch], [p.start for p in batch]
            policy_lp = policy.token_logprobs(ids, starts, config.batch_size)
            ref_lp = policy_lp if ref is policy else ref.token_logprobs(ids, starts, config.batch_size)
            return [_result(p, lp, rl, config) for p, lp, rl in zip(batch, policy_lp, ref_lp, strict=True)]

        results = score_prepared(samples, config.failure_score, prepare, run)
        return list(with_model(results, policy, config, reference={"name": config.ref_model, **ref.describe()}))

    def _check_vocab(self, policy: Backend, ref: Backend) -> None:
        key = (policy.spec.model, ref.spec.model)
        if key not in self._same_vocab:
            self._same_vocab[key] = ref is policy or policy.tokenizer.get_vocab() == ref.tokenizer.get_vocab()
        if not self._same_vocab[key]:
            raise BackendError(f"{policy.spec.model!r} and {ref.spec.model!r} have different vocabularies")


def _result(p: _Prepared, policy_lp: list[float], ref_lp: list[float], config: ImplicitPRM.Config) -> Result:
    rewards = implicit_token_rewards(policy_lp, ref_lp, config.beta)
    if config.granularity == "step":
        rewards = step_sums(rewards, p.token_steps, p.n_steps)
    return Result.ok(
        aggregate(rewards, config.aggregate), steps=rewards, granularity=config.granularity, n_tokens=len(policy_lp)
    )


def token_steps(token_starts: Sequence[int], text: str, delimiter: str) -> tuple[list[int], int]:
    """Which step each token belongs to, and how many steps there are.

    Steps are the non-blank pieces of ``text`` between delimiters; a step starts at its first
    non-blank character. A token belongs to the last step that starts at or before the token's
    first character, so delimiters and blanks count towards the step they end, and leading
    blanks towards the first step.
    """
    pieces = re.finditer(r"(?:(?!" + re.escape(delimiter) + r")[\s\S])+", text)
    starts = [m.start() + len(m.group()) - len(m.group().lstrip()) for m in pieces if m.group().strip()]
    if not starts:
        starts = [0]
    return [max(bisect_right(starts, position) - 1, 0) for position in token_starts], len(starts)
