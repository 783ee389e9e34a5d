"""``exact``: the response equals the reference after normalisation.

Judges: string identity modulo case, whitespace runs and punctuation (each configurable), against
one reference or any of a list of aliases. Does not judge meaning: "4" and "four" differ (use
``math`` or ``qa_match`` for that).
"""

from __future__ import annotations

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import normalize_text, strip_think


class ExactVerifier(Verifier):
    """Normalised string match of the response against the reference (or a list of aliases)."""

    name = "exact"
    version = "1"
    kind = "rule"
    inline = True

    class Config(VerifierConfig):
        case_sensitive: bool = Field(False, description="Whether letter case must match.")
        whitespace_sensitive: bool = Field(False, description="Whether whitespace runs must match exactly.")
        punctuation_sensitive: bool = Field(True, description="Whether punctuation must match.")
        strip_think: bool = Field(True, description="Ignore a leading <think>...</think> block.")

    def score(self, sample: Sample, config: Config) -> Result:
        references = sample.reference if isinstance(sample.reference, list) else [sample.reference]
        if not references or not all(isinstance(ref, str | int | float) for ref in references):
            raise VerifierError("exact needs a string reference (or a list of strings)")
        response = strip_think(sample.response) if config.strip_think else sample.response

        def norm(text: str) -> str:
            return normalize_text(
                text,
                case=config.case_sensitive,
                whitespace=config.whitespace_sensitive,
                punctuation=config.punctuation_sensitive,
            )

        answer = norm(response)
        matched = next((ref for ref in references if norm(str(ref)) == answer), None)
        return Result.ok(1.0 if matched is not None else 0.0, normalized_response=answer[:200], matched=matched)
