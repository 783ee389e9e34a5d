"""``pass_at_k``: per-sample rewards whose group mean is the group's pass@k.

Training on pass@1 rewards exploits what the policy already solves; training on pass@k keeps it
exploring, since a group is rewarded when *any* of k tries succeeds. Following Chen et al. (2025,
"Pass@k Training for Adaptively Balancing Exploration and Exploitation", arXiv 2508.10751), each
sample gets the expected pass@k of the size-k subsets of its group that contain it. With n
samples of which m are wrong:

    correct sample:  1
    wrong sample:    1 - C(m-1, k-1) / C(n-1, k-1)     (some other member of its k-subset is right)
    group mean:      1 - C(m, k) / C(n, k)             (the unbiased pass@k estimate)

so k = 1 is plain correctness, and a wrong sample in a group that often succeeds still earns
credit. ``k`` above the group size is clamped to it.

Group verifiers do not see other verifiers' scores, so correctness comes from ``metadata``
(``metadata[metadata_key]``: a bool, or a score counted correct at ``threshold`` or more) when
every sample carries it, else from comparing each sample's final answer with its ``reference``
(:mod:`rewardhub.verifiers.group.answers`: the final answer read by the reader every verifier shares,
:func:`rewardhub.verifiers.final_answer.read_final_answer`, and the ``math`` verifier's equivalence by default);
``correctness`` forces one source. A sample with neither, an unreadable gold or an answer too
expensive to read is an ``error`` status for the whole group: one unknown correctness changes
every member's credit, and an unknown is not a wrong answer.
"""

from __future__ import annotations

from math import comb
from typing import Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..math import TooComplex, Unparseable
from .answers import Equivalence, read_answer, read_gold, same_answer

__all__ = ["PassAtKVerifier", "group_pass_at_k", "sample_pass_at_k"]


def group_pass_at_k(n: int, correct: int, k: int) -> float:
    """Unbiased pass@k of a group of ``n`` samples, ``correct`` of them right (Chen et al., 2021)."""
    return 1.0 - comb(n - correct, k) / comb(n, k)


def sample_pass_at_k(n: int, correct: int, k: int, is_correct: bool) -> float:
    """Expected pass@k over the size-k subsets of the group that contain this sample."""
    if is_correct:
        return 1.0
    return 1.0 - comb(n - correct - 1, k - 1) / comb(n - 1, k - 1)


class PassAtKVerifier(Verifier):
    """Pass@k reward shaping: each sample's expected pass@k credit within its group."""

    name = "pass_at_k"
    version = "1"
    kind = "group"

    class Config(VerifierConfig):
        k: int = Field(4, ge=1, description="k of pass@k; clamped to the group size.")
        correctness: Literal["auto", "metadata", "reference"] = Field(
            "auto",
            description="Where correctness comes from: metadata, the reference, or auto (metadata when all have it).",
        )
        metadata_key: str = Field("correct", description="Metadata field holding a bool or a score per sample.")
        threshold: float = Field(0.5, description="A numeric metadata score at or above this counts as correct.")
        equivalence: Equivalence = Field(
            "math",
            description="Reference comparison: 'math' (the math verifier's equivalence) or 'text' (normal form).",
        )

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        source = _source(samples, config)
        correct = [_is_correct(s, i, source, config) for i, s in enumerate(samples)]
        n, c = len(correct), sum(correct)
        k = min(config.k, n)
        group = group_pass_at_k(n, c, k) if n else 0.0
        return [
            Result.ok(
                sample_pass_at_k(n, c, k, ok),
                correct=ok,
                correct_count=c,
                group_size=n,
                k=k,
                group_pass_at_k=round(group, 6),
                correctness_from=source,
            )
            for ok in correct
        ]


def _source(samples: list[Sample], config: PassAtKVerifier.Config) -> Literal["metadata", "reference"]:
    if config.correctness != "auto":
        return config.correctness
    return "metadata" if all(config.metadata_key in s.metadata for s in samples) else "reference"


def _is_correct(sample: Sample, index: int, source: str, config: PassAtKVerifier.Config) -> bool:
    if source == "metadata":
        value = sample.metadata.get(config.metadata_key)
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return value >= config.threshold
        raise VerifierError(
            f"sample {index}: metadata[{config.metadata_key!r}] must be a bool or a number, got {value!r}"
        )
    reference = sample.reference
    if not isinstance(reference, (str, int, float)) or isinstance(reference, bool) or str(reference).strip() == "":
        raise VerifierError(f"sample {index}: no {config.metadata_key!r} in metadata and no usable reference answer")
    try:
        gold = read_gold(str(reference), config.equivalence)
        answer = read_answer(sample.response, config.equivalence)
    except Unparseable as exc:
        raise VerifierError(f"sample {index}: {exc}") from None
    except TooComplex as exc:
        raise VerifierError(f"sample {index}: too complex to judge: {exc.reason}") from None
    return answer is not None and same_answer(gold, answer)
