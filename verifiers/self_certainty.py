"""``self_certainty``: a reward from the policy's own token distributions, no label needed.

INTUITOR (Zhao et al., 2025, "Learning to Reason without External Rewards", arXiv 2505.19590)
rewards a response by its self-certainty, the mean over its tokens of the KL divergence from the
uniform distribution U over the vocabulary V to the policy's next-token distribution p:

    SC = (1/|o|) Σ_t KL(U ‖ p_t) = (1/|o|) Σ_t [ -log|V| - (1/|V|) Σ_j log p_t(j) ]

(INTUITOR's released code computes ``logsumexp(logits) - mean(logits)``, which is this plus log|V|,
a constant that group-normalised advantages remove; lm-polygraph's ``SelfCertainty`` is its negation.)
Its kin, entropy minimisation (Agarwal et al., 2025, arXiv 2505.15134), rewards low token entropy
H_t = -Σ_j p_t(j) log p_t(j); ``score: negative_entropy`` gives -(1/|o|) Σ_t H_t.

The request carries the log-probabilities, as engines return them: only the top k per token, so
the sum over the vocabulary is truncated, and how is explicit (``truncation``):

- ``renormalized`` (default): the k alternatives renormalised to sum to 1 are the distribution,
  and U is uniform over them: KL(U_k ‖ p̂) = -log k - mean_j log p(j) + log Σ_j p(j). Exact when k
  is the whole vocabulary; otherwise a different quantity, comparable only across equal k.
- ``uniform_tail`` (needs ``vocab_size``): the mass the top k leave, 1 - Σ p(j), is spread evenly
  over the other |V| - k tokens (floored at 1e-12, since a tail of exactly 0 makes KL infinite).
  An even tail is the flattest possible, so this SC is a lower bound of the full-vocabulary one
  and this entropy an upper bound; both are exact when the tail really is even.

``metadata.logprobs`` holds one entry per generated token: a list of the top-k log-probabilities
(the bundled trainer's shape), a ``{token: logprob}`` map (vLLM and OpenAI completions), or an
OpenAI chat entry ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}`` (the whole
``{"content": [...]}`` object is accepted too). A malformed entry is an ``error`` naming it.

What it does not judge: correctness. A policy trained on it alone learns to be confident, and a
response repeating one sure token is its best score: pair it with a correctness term or a gate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig

__all__ = ["SelfCertaintyVerifier", "TokenStats", "read_top_logprobs", "token_stats"]

TAIL_FLOOR = 1e-12
_SLACK = 1e-3  # rounding an engine may leave: log-probs up to +1e-3, top-k mass up to 1 + 1e-3


@dataclass(frozen=True)
class TokenStats:
    self_certainty: float  # KL(U ‖ p) under the truncation
    entropy: float


def token_stats(
    logprobs: Sequence[float], truncation: str = "renormalized", vocab_size: int | None = None
) -> TokenStats:
    """Self-certainty and entropy of one token's top-k log-probabilities (see the module docstring)."""
    k = len(logprobs)
    probs = [math.exp(lp) for lp in logprobs]
    mass = sum(probs)
    if truncation == "renormalized":
        log_mass = math.log(mass)
        kl = -math.log(k) - sum(logprobs) / k + log_mass
        entropy = -sum(p / mass * (lp - log_mass) for p, lp in zip(probs, logprobs, strict=True))
        return TokenStats(kl, entropy)
    assert vocab_size is not None and vocab_size > k
    rest = vocab_size - k
    tail = max(1.0 - mass, TAIL_FLOOR)
    log_tail_each = math.log(tail / rest)
    kl = -math.log(vocab_size) - (sum(logprobs) + rest * log_tail_each) / vocab_size
    entropy = -sum(p * lp for p, lp in zip(probs, logprobs, strict=True)) - tail * log_tail_each
    return TokenStats(kl, entropy)


def read_top_logprobs(raw: Any, field: str = "metadata.logprobs") -> list[list[float]]:
    """The top-k log-probabilities of each token, from any of the accepted shapes; VerifierError naming the entry."""
    if isinstance(raw, dict) and "content" in raw:
        raw, field = raw["content"], f"{field}.content"
    if not isinstance(raw, list):
        raise VerifierError(f"{field} must be a list with one entry per generated token, not {type(raw).__name__}")
    if not raw:
        raise VerifierError(f"{field} is empty: a response with no tokens has no self-certainty")
    return [_entry(entry, f"{field}[{t}]") for t, entry in enumerate(raw)]


def _entry(entry: Any, where: str) -> list[float]:
    if isinstance(entry, dict) and "top_logprobs" in entry:
        top = entry["top_logprobs"]
        if isinstance(top, list):
            values = [alt.get("logprob") if isinstance(alt, dict) else alt for alt in top]
        elif isinstance(top, dict):
            values = list(top.values())
        else:
            raise VerifierError(f"{where}.top_logprobs must be a list or a map of log-probabilities")
        where = f"{where}.top_logprobs"
    elif isinstance(entry, dict):
        values = list(entry.values())
    elif isinstance(entry, list):
        values = entry
    else:
        raise VerifierError(f"{where} must be a list of log-probabilities or a map token -> log-probability")
    if len(values) < 2:
        raise VerifierError(f"{where} holds {len(values)} alternative(s): ask the engine for top_logprobs >= 2")
    checked = []
    for j, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise VerifierError(f"{where}[{j}] is not a finite log-probability: {value!r}")
        if value > _SLACK:
            raise VerifierError(f"{where}[{j}] = {value} is not a log-probability (above 0)")
        checked.append(min(float(value), 0.0))
    mass = sum(math.exp(lp) for lp in checked)
    if mass > 1.0 + _SLACK:
        raise VerifierError(f"{where}: its probabilities sum to {mass:.4f}, more than 1")
    return checked


class SelfCertaintyVerifier(Verifier):
    """INTUITOR's self-certainty (or negative token entropy) from the top-k log-probs the request carries."""

    name: ClassVar[str] = "self_certainty"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "rule"

    class Config(VerifierConfig):
        score: Literal["self_certainty", "negative_entropy"] = Field(
            "self_certainty", description="The reward: mean KL(U ‖ p) per token, or minus the mean token entropy."
        )
        truncation: Literal["renormalized", "uniform_tail"] = Field(
            "renormalized",
            description="How the top-k stand in for the vocabulary: renormalised among themselves, or the rest of "
            "the mass spread evenly over vocab_size - k tokens.",
        )
        vocab_size: int | None = Field(None, ge=2, description="|V|, needed by `uniform_tail`.")
        per_token: bool = Field(False, description="Also return each token's value in `steps`.")

        @model_validator(mode="after")
        def _tail_needs_vocab(self) -> SelfCertaintyVerifier.Config:
            if self.truncation == "uniform_tail" and self.vocab_size is None:
                raise ValueError("truncation 'uniform_tail' needs vocab_size")
            return self

    def score(self, sample: Sample, config: Config) -> Result:
        if "logprobs" not in sample.metadata:
            raise VerifierError("metadata.logprobs is missing: send the top-k log-probabilities of each token")
        tokens = read_top_logprobs(sample.metadata["logprobs"])
        expected = sample.metadata.get("response_tokens")
        if isinstance(expected, int) and not isinstance(expected, bool) and expected != len(tokens):
            raise VerifierError(
                f"metadata.logprobs has {len(tokens)} entries but metadata.response_tokens is {expected}"
            )
        k_min, k_max = min(map(len, tokens)), max(map(len, tokens))
        if config.truncation == "uniform_tail" and (config.vocab_size or 0) <= k_max:
            raise VerifierError(f"vocab_size {config.vocab_size} leaves no tail beyond the {k_max} alternatives given")
        stats = [token_stats(t, config.truncation, config.vocab_size) for t in tokens]
        certainty = sum(s.self_certainty for s in stats) / len(stats)
        entropy = sum(s.entropy for s in stats) / len(stats)
        per_token = [s.self_certainty if config.score == "self_certainty" else -s.entropy for s in stats]
        score = certainty if config.score == "self_certainty" else -entropy
        return Result.ok(
            score,
            steps=per_token if config.per_token else None,
            self_certainty=certainty,
            entropy=entropy,
            tokens=len(tokens),
            top_k=k_min,
            truncation=config.truncation,
        )
