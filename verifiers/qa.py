"""``f1`` and ``qa_match``: short-answer QA against a list of acceptable answers (aliases).

Both normalise the way SQuAD's official evaluation does (lower case, punctuation and the English
articles a/an/the removed, whitespace collapsed; here punctuation means every Unicode punctuation
character, not only ASCII) and take the best over the aliases in ``reference``: a string, a list
of strings, or ``{"aliases": [...]}`` (TriviaQA/Natural Questions style).

- ``f1``: token-level F1 between the predicted answer and the best alias, in [0, 1].
- ``qa_match``: 1 when the normalised prediction equals an alias, or, with ``contains``, when an
  alias appears in it as a whole run of tokens (for answers given in a sentence).

The predicted answer is taken from the response by ``extract``: ``auto`` reads the last
``<answer>…</answer>``, else the last ``\\boxed{…}``, else the text after the last "answer is" /
"Answer:", else the whole response (after any ``<think>…</think>``). They judge surface overlap,
not meaning: a paraphrase or a number written in words ("four" for "4") scores as a miss.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import strip_think

__all__ = ["F1Verifier", "QAMatchVerifier", "aliases_of", "extract_answer", "normalize_answer", "token_f1"]

Extract = Literal["auto", "full", "answer_tag", "boxed", "answer_is"]

# the body may not contain another opener: many unclosed tags would otherwise rescan the text
_ANSWER_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_IS = re.compile(r"(?:answer is|answer:)\s*:?\s*(.+)", re.IGNORECASE)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower, drop punctuation and articles, collapse whitespace."""
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text.lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall after normalisation (SQuAD's F1)."""
    pred_tokens, gold_tokens = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def aliases_of(reference: Any) -> list[str]:
    """The acceptable answers in ``reference``; anything unusable is the caller's error."""
    if isinstance(reference, dict) and set(reference) == {"aliases"}:
        reference = reference["aliases"]
    if isinstance(reference, (str, int, float)) and not isinstance(reference, bool):
        reference = [reference]
    if not isinstance(reference, list) or not reference:
        raise VerifierError("reference must be an answer, a non-empty list of aliases or {'aliases': [...]}")
    if not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in reference):
        raise VerifierError("every alias must be a string or a number")
    aliases = [str(a) for a in reference]
    if not any(normalize_answer(a) for a in aliases):
        raise VerifierError("every alias is empty after normalisation")
    return aliases


def extract_answer(response: str, how: Extract) -> str:
    """The predicted answer inside a free-form response (see the module docstring for ``auto``)."""
    text = strip_think(response)
    if how == "full":
        return text.strip()
    finders = {"answer_tag": _last_answer_tag, "boxed": _last_boxed, "answer_is": _last_answer_is}
    order = list(finders) if how == "auto" else [how]
    for name in order:
        found = finders[name](text)
        if found is not None:
            return found.strip()
    return text.strip() if how == "auto" else ""


def _last_answer_tag(text: str) -> str | None:
    found = _ANSWER_TAG.findall(text)
    return found[-1] if found else None


def _last_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    return None


def _last_answer_is(text: str) -> str | None:
    found = _ANSWER_IS.findall(text)
    return found[-1].rstrip(".") if found else None


@dataclass(frozen=True)
class Best:
    score: float
    alias: str


class QAConfig(VerifierConfig):
    extract: Extract = Field(
        "auto", description="Where the answer is: auto, full (whole response), answer_tag, boxed or answer_is."
    )


class F1Verifier(Verifier):
    """SQuAD-style token F1 between the extracted answer and the best of the reference's aliases."""

    name = "f1"
    version = "1"
    kind = "rule"

    class Config(QAConfig):
        pass

    def score(self, sample: Sample, config: Config) -> Result:
        aliases = aliases_of(sample.reference)
        prediction = extract_answer(sample.response, config.extract)
        best = max((Best(token_f1(prediction, a), a) for a in aliases), key=lambda b: b.score)
        return Result.ok(best.score, prediction=prediction, best_alias=best.alias, aliases=len(aliases))


class QAMatchVerifier(Verifier):
    """1 when the extracted answer equals one of the aliases after SQuAD normalisation."""

    name = "qa_match"
    version = "1"
    kind = "rule"

    class Config(QAConfig):
        contains: bool = Field(
            False, description="Also accept an alias that appears as a whole run of tokens inside the answer."
        )

    def score(self, sample: Sample, config: Config) -> Result:
        aliases = aliases_of(sample.reference)
        prediction = extract_answer(sample.response, config.extract)
        normalized = normalize_answer(prediction)
        matched = next((a for a in aliases if _matches(normalized, normalize_answer(a), config.contains)), None)
        return Result.ok(
            float(matched is not None), prediction=prediction, normalized=normalized, matched_alias=matched
        )


def _matches(prediction: str, alias: str, contains: bool) -> bool:
    if not alias:
        return False
    return prediction == alias or (contains and f" {alias} " in f" {prediction} ")
