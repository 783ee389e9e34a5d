"""``choice``: the multiple-choice letter the response commits to equals the reference letter.

Judges: the *last* committed letter, found by anchors in order of strength: ``\\boxed{B}``,
"answer: B" / "answer is (B)", a final line that is only a letter ("(B)", "B.", "B) text"). A
response that names several letters in its final answer ("A or C") is ambiguous and scores 0.
Does not judge the option's text against the letter (use ``math`` for "C. x = 42" with a numeric
gold).

``mode`` names another reading instead: NeMo-Gym's grading modes (:mod:`.choice_modes`), each with
its own idea of an answer (the last box only, an option's text in the box, the ``Answer:`` line).
A mode reads what its reference reads: rewardhub's own reading skips a leading ``<think>`` block,
NeMo-Gym's read the whole text. ``details.mode`` names the reading used.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .choice_modes import read_letter
from .text import strip_think

_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*\(?([A-Za-z])\)?\s*\}?\s*\}")
_ANSWER = re.compile(
    r"answer\s*(?:is|:)?\s*(?:option\s*)?[:\s]*\**\(?\s*([A-Za-z])\s*\)?\**(?=[\s.,;:)!*]|$)", re.IGNORECASE
)
_LINE = re.compile(r"^\s*\**\(?([A-Za-z])(?:\)|\.|:|\s*$)", re.MULTILINE)
_AMBIGUOUS = re.compile(r"\b([A-Z])\b\s*(?:or|and|/|,)\s*\(?\b([A-Z])\b")
# What may follow an "Answer: B" and take the commitment back: another letter offered beside it
# ("B or C", "B = C", "B \\lor C", "A B C D") or the letter denied ("B (this is wrong)", "B \\text{ is wrong}").
# falsepass's P15 (hedged in the answer slot) found both paid; only what directly follows counts,
# so "Answer: B. Oxygen is not taken in" still commits to B.
_TAKEN_BACK = re.compile(
    r"\s*(?:(?:or|and|/|,|=|\\lor|\\vee)\s*\(?\s*(?-i:[A-Z])\b|[ \t]+\(?(?-i:[A-Z])(?![\w'])"
    r"|\(?\s*(?:\\text\{\s*)?(?:this\s+)?(?:is\s+)?(?:not|wrong|incorrect|false)\b)",
    re.IGNORECASE,
)


def extract_choice(text: str, letters: str) -> tuple[str | None, str]:
    """The last committed letter among ``letters`` and the anchor that found it."""
    allowed = set(letters.upper())
    for anchor, pattern in (("boxed", _BOXED), ("answer", _ANSWER)):
        found = [m for m in pattern.finditer(text) if m.group(1).upper() in allowed]
        if found:
            if anchor == "answer" and _TAKEN_BACK.match(text, found[-1].end()):
                return None, "taken_back"
            return found[-1].group(1).upper(), anchor
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
    version = "2"
    kind = "rule"
    inline = True

    class Config(VerifierConfig):
        letters: str = Field("ABCDEFGHIJ", description="The option letters that count as answers.")
        mode: Literal[
            "rewardhub",
            "strict_single_letter_boxed",
            "lenient_boxed",
            "lenient_answer_colon",
            "lenient_answer_colon_md",
            "gpqa",
        ] = Field(
            "rewardhub",
            description="rewardhub: the last boxed letter, else 'Answer: X', else a final letter line. The others "
            "are NeMo-Gym's grading modes (mcqa's four, gpqa_diamond's reading), with their semantics.",
        )
        options: list[dict[str, str | None]] | None = Field(
            None, description="The options' texts ([{'A': text}, ...]), read by the lenient NeMo-Gym modes."
        )
        answer_prefix: str | None = Field(None, description="lenient_answer_colon_md: the row's answer prefix.")
        strip_think: bool | None = Field(
            None, description="Skip a leading <think> block; unset: as the mode's reference does (rewardhub: yes)."
        )

    def score(self, sample: Sample, config: Config) -> Result:
        if config.mode != "rewardhub":
            return _nemo_gym(sample, config)
        gold = str(sample.reference or "").strip().strip("()").upper()
        if len(gold) != 1 or gold not in config.letters.upper():
            raise VerifierError(
                f"choice reference must be one of the letters {config.letters!r}, got {sample.reference!r}"
            )
        text = sample.response if config.strip_think is False else strip_think(sample.response)
        answer, anchor = extract_choice(text, config.letters)
        if answer is None:
            return Result.ok(0.0, extracted=None, anchor=anchor, reason="no_answer", mode="rewardhub")
        reason = "match" if answer == gold else "mismatch"
        return Result.ok(float(answer == gold), extracted=answer, anchor=anchor, reason=reason, mode="rewardhub")


def _nemo_gym(sample: Sample, config: ChoiceVerifier.Config) -> Result:
    """A NeMo-Gym grading mode, as its server scores: the gold read as the server reads it (stripped,
    upper case; a gold that no answer can equal, or none, scores 0 like any miss)."""
    gold = str(sample.reference or "").strip().upper()
    text = strip_think(sample.response) if config.strip_think else sample.response
    answer = read_letter(text, config.mode, set(config.letters.upper()), config.options or (), config.answer_prefix)
    if answer is None:
        return Result.ok(0.0, extracted=None, reason="no_answer", mode=config.mode)
    reason = "match" if answer == gold else "mismatch"
    return Result.ok(float(answer == gold), extracted=answer, reason=reason, mode=config.mode)
