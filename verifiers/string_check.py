"""``string_check``: the string-check grader of reinforcement fine-tuning as a verifier.

It compares the sample's response (the grader's rendered ``input``) with its reference (the
rendered ``reference``): ``eq`` / ``ne`` (case-sensitive identity or its negation), ``like`` /
``ilike`` (the response contains the reference, with or without case). Scores 1 or 0. It does no
normalisation: use ``exact`` for normalised matching.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

__all__ = ["StringCheckVerifier", "reference_text"]

Operation = Literal["eq", "ne", "like", "ilike"]


def reference_text(sample: Sample, verifier: str) -> str:
    """The reference as text; a list or mapping is no string to compare with."""
    if not isinstance(sample.reference, str | int | float) or isinstance(sample.reference, bool):
        raise VerifierError(f"{verifier} needs a string reference, got {type(sample.reference).__name__}")
    return str(sample.reference)


class StringCheckVerifier(Verifier):
    """Case-sensitive equality, inequality or containment of the reference in the response."""

    name = "string_check"
    version = "1"
    kind = "rule"
    inline = True  # one comparison: cheaper than a pool round trip, bounded by the body size

    class Config(VerifierConfig):
        operation: Operation = Field(
            "eq", description="eq, ne: (not) identical; like: contains; ilike: contains, any case."
        )

    def score(self, sample: Sample, config: Config) -> Result:
        reference, text = reference_text(sample, self.name), sample.response
        if config.operation == "eq":
            passed = text == reference
        elif config.operation == "ne":
            passed = text != reference
        elif config.operation == "like":
            passed = reference in text
        else:
            passed = reference.casefold() in text.casefold()
        return Result.ok(float(passed), operation=config.operation)
