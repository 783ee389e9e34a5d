"""``diversity``: a bonus for a sample that differs from the other samples of its group.

Group-relative RL collapses toward one way of answering; a small diversity bonus (added with a
weight in a ``sum``) pushes against it. Responses are lower-cased word n-grams (``n`` words, runs of
``\\w``). ``method`` decides what "differs" means:

- ``pairwise`` (default): 1 minus the mean Jaccard similarity of the sample's n-gram set to each
  other sample's (Self-BLEU in spirit, cheaper);
- ``distinct``: the share of the sample's distinct n-grams that no other sample of the group uses.

Both are in [0, 1]; a sample alone in its group scores 1 (nothing to be similar to), and two
responses too short to have an n-gram are identical to each other. ``details`` carries the
group's distinct-n (distinct n-grams over all n-grams, Li et al., 2016). It judges surface form:
two paraphrases of one idea count as diverse, and it says nothing about quality, so never use it
alone.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..text import strip_think

__all__ = ["DiversityVerifier", "jaccard", "ngrams"]

_WORD = re.compile(r"\w+")


def ngrams(text: str, n: int) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are the same set."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


class DiversityVerifier(Verifier):
    """Bonus in [0, 1] for how much a sample's word n-grams differ from the rest of its group."""

    name = "diversity"
    version = "1"
    kind = "group"

    class Config(VerifierConfig):
        n: int = Field(2, ge=1, le=8, description="Words per n-gram.")
        method: Literal["pairwise", "distinct"] = Field(
            "pairwise",
            description="pairwise: 1 - mean Jaccard similarity to the others; distinct: share of n-grams no other sample uses.",
        )
        strip_think: bool = Field(False, description="Compare only the text after <think>...</think>.")

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        texts = [strip_think(s.response) if config.strip_think else s.response for s in samples]
        grams = [ngrams(t, config.n) for t in texts]
        sets = [set(g) for g in grams]
        total = sum(len(g) for g in grams)
        group_distinct = round(len(set().union(*sets)) / total, 4) if total else 0.0
        scores = [_pairwise(i, sets) if config.method == "pairwise" else _distinct(i, sets) for i in range(len(sets))]
        return [
            Result.ok(score, ngrams=len(grams[i]), group_size=len(samples), group_distinct_n=group_distinct)
            for i, score in enumerate(scores)
        ]


def _pairwise(i: int, sets: list[set[tuple[str, ...]]]) -> float:
    others = [s for j, s in enumerate(sets) if j != i]
    return 1.0 - sum(jaccard(sets[i], s) for s in others) / len(others) if others else 1.0


def _distinct(i: int, sets: list[set[tuple[str, ...]]]) -> float:
    if len(sets) == 1:
        return 1.0
    if not sets[i]:
        return 0.0
    seen_elsewhere = set().union(*(s for j, s in enumerate(sets) if j != i))
    return len(sets[i] - seen_elsewhere) / len(sets[i])
