"""``format``: the response follows the R1 layout, a reasoning block then an answer.

Judges: the response opens with the think tag (after optional whitespace), closes it exactly
once, and is followed by a non-empty answer; optionally the answer must itself be wrapped in
answer tags. Markup alone is not content: a reasoning block or an answer made only of empty tags
(``<think><step></step></think>``, ``<answer></answer>``) counts as empty. Does not judge whether
the reasoning or the answer is right.
"""

from __future__ import annotations

import re

from pydantic import Field

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*\s*/?>")


def has_content(text: str) -> bool:
    """Whether ``text`` says anything once tags and whitespace are gone."""
    return bool(_TAG.sub("", text).strip())


def check_format(text: str, think: tuple[str, str], answer: tuple[str, str] | None, prefilled: bool) -> str | None:
    """``None`` when the layout is right, else the reason it is not."""
    open_tag, close_tag = think
    body = text if prefilled else text.lstrip()
    if not prefilled:
        if not body.startswith(open_tag):
            return "missing_think_open"
        body = body[len(open_tag) :]
    if body.count(open_tag) or body.count(close_tag) != 1:
        return "think_tags_unbalanced"
    reasoning, rest = body.split(close_tag)
    if not has_content(reasoning):
        return "empty_reasoning"
    rest = rest.strip()
    if answer is not None:
        a_open, a_close = answer
        if (
            not (rest.startswith(a_open) and rest.endswith(a_close))
            or rest.count(a_open) != 1
            or rest.count(a_close) != 1
        ):
            return "answer_tags_missing"
        rest = rest[len(a_open) : -len(a_close)].strip()
    if not has_content(rest):
        return "empty_answer"
    return None


class FormatVerifier(Verifier):
    """R1-style ``<think>...</think>`` followed by an answer (configurable tags)."""

    name = "format"
    version = "1"
    kind = "rule"
    inline = True

    class Config(VerifierConfig):
        think_open: str = Field("<think>", description="Tag that opens the reasoning.")
        think_close: str = Field("</think>", description="Tag that closes the reasoning.")
        answer_open: str | None = Field(None, description="If set (e.g. '<answer>'), the answer must be wrapped in it.")
        answer_close: str | None = Field(None, description="Closing answer tag, required with answer_open.")
        think_prefilled: bool = Field(
            False, description="The chat template already opened the think tag, so the response starts inside it."
        )

    def score(self, sample: Sample, config: Config) -> Result:
        answer = (config.answer_open, config.answer_close or "") if config.answer_open else None
        problem = check_format(sample.response, (config.think_open, config.think_close), answer, config.think_prefilled)
        return Result.ok(1.0 if problem is None else 0.0, reason=problem or "ok")
