"""``majority_vote``: agreement with the group's majority answer, a reward without labels.

Test-time reinforcement learning (TTRL, Zuo et al., 2025, arXiv 2504.16084) estimates the label of
an unlabelled prompt by majority vote over the sampled responses and rewards each response for
agreeing with it. Here: every sample's final answer is read (by the reader every verifier shares,
:func:`rewardhub.verifiers.final_answer.read_final_answer`) and answers are clustered by
equivalence (:mod:`rewardhub.verifiers.group.answers`; ``math`` by default, ``text`` without sympy); the
largest cluster is the majority (a tie goes to the cluster seen first); a sample scores 1 when its
answer is in it, 0 when it differs or gives no answer (no answer, no vote). With ``min_share``, a
majority backed by too small a share of the group is no consensus and every sample scores 0. An
answer too expensive to read is an ``error`` status for that sample alone, and casts no vote.

The ``reference`` is not used for the reward; when samples carry one, ``details`` says whether the
majority matched it (TTRL's label accuracy), which is how to watch this reward drift. It judges
agreement, not correctness: a confidently wrong group rewards its wrong answer. Math equivalence
costs sympy time per distinct answer pair: give large groups a larger ``timeout_s``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..math import TooComplex, Unparseable
from .answers import Answer, Equivalence, read_answer, read_gold, same_answer

__all__ = ["MajorityVoteVerifier", "cluster"]


def cluster(answers: list[Answer | None]) -> list[list[int]]:
    """Indices of equivalent answers, clusters in order of first appearance; None casts no vote."""
    clusters: list[list[int]] = []
    for i, answer in enumerate(answers):
        if answer is None:
            continue
        home = next((c for c in clusters if same_answer(answers[c[0]], answer)), None)  # type: ignore[arg-type]
        if home is None:
            clusters.append([i])
        else:
            home.append(i)
    return clusters


class MajorityVoteVerifier(Verifier):
    """1 for a sample whose final answer agrees with the majority answer of its group (test-time RL)."""

    name = "majority_vote"
    version = "1"
    kind = "group"

    class Config(VerifierConfig):
        min_share: float = Field(
            0.0, ge=0, le=1, description="Least share of the group's samples the majority needs; below it, all score 0."
        )
        equivalence: Equivalence = Field(
            "math",
            description="When two answers agree: 'math' (the math verifier's equivalence) or 'text' (normal form).",
        )

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        answers: list[Answer | None] = []
        errors: dict[int, str] = {}
        for i, sample in enumerate(samples):
            try:
                answers.append(read_answer(sample.response, config.equivalence))
            except TooComplex as exc:
                answers.append(None)
                errors[i] = f"answer too complex to read: {exc.reason}"
        clusters = cluster(answers)
        winner = max(clusters, key=len, default=[])  # max keeps the first of equals: first seen wins
        majority = answers[winner[0]] if winner else None
        agree = set(winner)
        share = len(winner) / len(samples) if samples else 0.0
        consensus = majority is not None and share >= config.min_share
        common: dict[str, Any] = {
            "majority": majority.normalized if majority else None,
            "majority_votes": len(winner),
            "voters": sum(len(c) for c in clusters),
            "distinct_answers": len(clusters),
            "group_size": len(samples),
            "tie": sum(1 for c in clusters if len(c) == len(winner)) > 1,
            "consensus": consensus,
        }
        label_hit = _matches_reference(majority, samples, config.equivalence)
        if label_hit is not None:
            common["majority_matches_reference"] = label_hit
        results = []
        for i, answer in enumerate(answers):
            shown = {"answer": answer.text if answer else None, **common}
            if i in errors:
                results.append(Result.failed(errors[i], **shown))
            else:
                results.append(Result.ok(float(consensus and i in agree), **shown))
        return results


def _matches_reference(majority: Answer | None, samples: list[Sample], equivalence: Equivalence) -> bool | None:
    reference = samples[0].reference if samples else None
    if majority is None or not isinstance(reference, (str, int, float)) or isinstance(reference, bool):
        return None
    try:
        return same_answer(read_gold(str(reference), equivalence), majority)
    except (Unparseable, TooComplex):
        return None  # only a diagnostic: an unreadable label leaves it out
