"""``majority_vote``: agreement with the group's majority answer, a reward without labels.

Test-time reinforcement learning (TTRL, Zuo et al., 2025, arXiv 2504.16084) estimates the label of
an unlabelled prompt by majority vote over the sampled responses and rewards each response for
agreeing with it. Here: every sample's final answer is extracted and normalised
(:mod:`verifiers.group.answers`); the answer with the most votes is the majority (a tie goes to
the answer that appeared first); a sample scores 1 when its answer is the majority's, 0 when it
differs or gives no answer (no answer, no vote). With ``min_share``, a majority backed by too small
a share of the group is no consensus and every sample scores 0.

The ``reference`` is not used for the reward; when samples carry one, ``details`` says whether the
majority matched it (TTRL's label accuracy), which is how to watch this reward drift. It judges
agreement, not correctness: a confidently wrong group rewards its wrong answer.
"""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig
from verifiers.group.answers import extract_final_answer, normalize_final_answer

__all__ = ["MajorityVoteVerifier"]


class MajorityVoteVerifier(Verifier):
    """1 for a sample whose final answer agrees with the majority answer of its group (test-time RL)."""

    name = "majority_vote"
    kind = "group"

    class Config(VerifierConfig):
        min_share: float = Field(
            0.0, ge=0, le=1, description="Least share of the group's samples the majority needs; below it, all score 0."
        )

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        raw = [extract_final_answer(s.response) for s in samples]
        votes = [normalize_final_answer(a) if a is not None else None for a in raw]
        tally = Counter(v for v in votes if v is not None)
        majority, count = tally.most_common(1)[0] if tally else (None, 0)  # ties: first seen wins
        share = count / len(samples) if samples else 0.0
        consensus = majority is not None and share >= config.min_share
        common = {
            "majority": majority,
            "majority_votes": count,
            "voters": sum(tally.values()),
            "group_size": len(samples),
            "tie": sum(1 for n in tally.values() if n == count) > 1,
            "consensus": consensus,
        }
        label_hit = _matches_reference(majority, samples)
        if label_hit is not None:
            common["majority_matches_reference"] = label_hit
        return [
            Result.ok(float(consensus and vote == majority), answer=answer, normalized=vote, **common)
            for answer, vote in zip(raw, votes, strict=True)
        ]


def _matches_reference(majority: str | None, samples: list[Sample]) -> bool | None:
    reference = samples[0].reference if samples else None
    if majority is None or not isinstance(reference, (str, int, float)) or isinstance(reference, bool):
        return None
    return normalize_final_answer(str(reference)) == majority
