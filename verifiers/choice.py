"""``choice``: the multiple-choice letter the response commits to equals the reference letter.

Judges: the *last* committed letter, found by anchors in order of strength: ``\\boxed{B}``,
"answer: B" / "answer is (B)", a final line that is only a letter ("(B)", "B.", "B) text"). A
response that names several letters in its final answer ("A or C") is ambiguous and scores 0.
Does not judge the option's text against the letter (use ``math`` for "C. x = 42" with a numeric
gold).
"""

from __future__ import annotations

import re

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import strip_think

_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*\(?([A-Za-z])\)?\s*\}?\s*\}")
_ANSWER = re.compile(
    r"answer\s*(?:is|:)?\s*(?:option\s*)?[:\s]*\**\(?\s*([A-Za-z])\s*\)?\**(?=[\s.,;:)!*]|$)", re.IGNORECASE
)
_LINE = re.compile(r"^\s*\**\(?([A-Za-z])(?:\)|\.|:|\s*$)", re.MULTILINE)
_AMBIGUOUS = re.compile(r"\b([A-Z])\b\s*(?:or|and|/|,)\s*\(?\b([A-Z])\b")


def extract_choice(text: str, letters: str) -> tuple[str | None, str]:
    """The last committed letter among ``letters`` and the anchor that found it."""
    allowed = set(letters.upper())
    for anchor, pattern in (("boxed", _BOXED), ("answer", _ANSWER)):
        found = [m.group(1).upper() for m in pattern.finditer(text) if m.group(1).upper() in allowed]
        if found:
            return found[-1], anchor
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        last = lines[-1]
        match = _LINE.match(last)
        if match and match.group(1).upper() in allowed and not _AMBIGUOUS.search(last):
            return match.group(1).upper(), "final_line"
    return None, "none"


class ChoiceVerifier(Verifier):
    """Multiple-choice letter extraction ("(B)", "Answer: B", "B.", boxed letters) and comparison."""

    name = "choice"
    version = "1"
    kind = "rule"
    inline = True

    class Config(VerifierConfig):
        letters: str = Field("ABCDEFGHIJ", description="The option letters that count as answers.")

    def score(self, sample: Sample, config: Config) -> Result:
        gold = str(sample.reference or "").strip().strip("()").upper()
        if len(gold) != 1 or gold not in config.letters.upper():
            raise VerifierError(
                f"choice reference must be one of the letters {config.letters!r}, got {sample.reference!r}"
            )
        answer, anchor = extract_choice(strip_think(sample.response), config.letters)
        if answer is None:
            return Result.ok(0.0, extracted=None, anchor=anchor, reason="no_answer")
        return Result.ok(
            float(answer == gold), extracted=answer, anchor=anchor, reason="match" if answer == gold else "mismatch"
        )
