"""``exact``: the response equals the reference after normalisation.

Judges: string identity modulo case, whitespace runs and punctuation (each configurable), against
one reference or any of a list of aliases. Does not judge meaning: "4" and "four" differ (use
``math`` or ``qa_match`` for that).

``extract: last_number`` compares only the last number written in the response instead of the
whole response: the strict reading of a numeric answer that arithmetic papers use ("the final
number"). "67 + 12 = 79" answers 79, "To calculate 67 + 12, you can" answers 12 and "seventy-nine"
answers nothing (0). Nothing is evaluated: "80 - 1" answers 1, never 79, so an expression cannot
stand in for the number. A cut-off response answers with whatever number it was cut after.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import normalize_text, strip_think

# an optional sign, digits with optional thousands separators, an optional decimal part; not glued
# to a letter or digit on its left ("x2", "h264" are names, not numbers)
_NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])")


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
        extract: Literal["whole", "last_number"] = Field(
            "whole",
            description="What is compared with the reference: 'whole', the response; 'last_number', the last number "
            "written in it (thousands commas dropped, nothing evaluated: '67 + 12 = 79' answers 79, '80 - 1' answers "
            "1; no number scores 0).",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        references = sample.reference if isinstance(sample.reference, list) else [sample.reference]
        if not references or not all(isinstance(ref, str | int | float) for ref in references):
            raise VerifierError("exact needs a string reference (or a list of strings)")
        response = strip_think(sample.response) if config.strip_think else sample.response
        if config.extract == "last_number":
            number = last_number(response)
            if number is None:
                return Result.ok(0.0, normalized_response=None, matched=None, reason="no_number")
            response = number

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


def last_number(text: str) -> str | None:
    """The last number written in ``text``, without thousands commas and with an ASCII minus."""
    found = _NUMBER.findall(text)
    return found[-1].replace(",", "").replace("−", "-") if found else None
