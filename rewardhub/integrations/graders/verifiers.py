"""``string_check`` and ``text_similarity``: the string graders of reinforcement fine-tuning as verifiers.

Both compare the sample's response (the grader's rendered ``input``) with its reference (the
rendered ``reference``), so they work in any request, not only behind ``/v1/graders/run``.

- ``string_check``: ``eq`` / ``ne`` (case-sensitive identity or its negation), ``like`` / ``ilike``
  (the response contains the reference, with or without case). Scores 1 or 0. No normalisation:
  use ``exact`` for normalised matching.
- ``text_similarity``: ``fuzzy_match`` (rapidfuzz's normalised Indel similarity), ``bleu``
  (sacreBLEU's sentence BLEU, exponential smoothing), ``gleu`` (NLTK's sentence GLEU) and
  ``rouge_1`` … ``rouge_5``, ``rouge_l`` (Google's rouge-score F-measure, no stemming), all in
  [0, 1]. It does not do ``cosine`` (needs an embedding model) or ``meteor`` (needs the WordNet
  corpus, which nothing here downloads).

The metrics come from the libraries named above (the ``graders`` extra); without them a sample
is an ``error`` status that says what to install.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

try:  # imported here so worker processes preload them; optional so the service starts without them
    import sacrebleu
    from nltk.translate.gleu_score import sentence_gleu
    from rapidfuzz import fuzz
    from rouge_score import rouge_scorer
except ImportError:  # pragma: no cover - exercised only without the graders extra
    sacrebleu = sentence_gleu = fuzz = rouge_scorer = None

__all__ = ["SIMILARITY_METRICS", "StringCheckVerifier", "TextSimilarityVerifier", "similarity"]

Operation = Literal["eq", "ne", "like", "ilike"]
Metric = Literal["fuzzy_match", "bleu", "gleu", "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l"]
SIMILARITY_METRICS: tuple[str, ...] = Metric.__args__  # type: ignore[attr-defined]
MAX_CHARS = 100_000


def _reference_text(sample: Sample, verifier: str) -> str:
    if not isinstance(sample.reference, str | int | float) or isinstance(sample.reference, bool):
        raise VerifierError(f"{verifier} needs a string reference, got {type(sample.reference).__name__}")
    return str(sample.reference)


class StringCheckVerifier(Verifier):
    """Case-sensitive equality, inequality or containment of the reference in the response."""

    name = "string_check"
    kind = "rule"
    inline = True  # one comparison: cheaper than a pool round trip, bounded by the body size

    class Config(VerifierConfig):
        operation: Operation = Field(
            "eq", description="eq, ne: (not) identical; like: contains; ilike: contains, any case."
        )

    def score(self, sample: Sample, config: Config) -> Result:
        reference, text = _reference_text(sample, self.name), sample.response
        if config.operation == "eq":
            passed = text == reference
        elif config.operation == "ne":
            passed = text != reference
        elif config.operation == "like":
            passed = reference in text
        else:
            passed = reference.casefold() in text.casefold()
        return Result.ok(float(passed), operation=config.operation)


class TextSimilarityVerifier(Verifier):
    """Similarity of the response to the reference in [0, 1]: fuzzy match, BLEU, GLEU or ROUGE."""

    name = "text_similarity"
    kind = "rule"

    class Config(VerifierConfig):
        metric: Metric = Field("fuzzy_match", description="fuzzy_match, bleu, gleu, rouge_1 ... rouge_5 or rouge_l.")

    def score(self, sample: Sample, config: Config) -> Result:
        reference = _reference_text(sample, self.name)
        if len(sample.response) > MAX_CHARS or len(reference) > MAX_CHARS:
            raise VerifierError(f"text_similarity compares texts of at most {MAX_CHARS} characters")
        return Result.ok(similarity(sample.response, reference, config.metric), metric=config.metric)


def similarity(text: str, reference: str, metric: str) -> float:
    """``metric`` of ``text`` against ``reference``, in [0, 1]."""
    if fuzz is None:
        raise VerifierError(
            "text_similarity needs rapidfuzz, sacrebleu, nltk and rouge-score: pip install 'rewardhub[graders]'"
        )
    if metric == "fuzzy_match":
        return fuzz.ratio(text, reference) / 100.0
    if metric == "bleu":
        return sacrebleu.sentence_bleu(text, [reference]).score / 100.0
    if metric == "gleu":
        return float(sentence_gleu([reference.split()], text.split())) if text.split() and reference.split() else 0.0
    if metric.startswith("rouge_"):
        key = "rougeL" if metric == "rouge_l" else "rouge" + metric.removeprefix("rouge_")
        return float(_rouge(key).score(reference, text)[key].fmeasure)
    raise VerifierError(f"unknown similarity metric {metric!r}")


_scorers: dict[str, Any] = {}


def _rouge(key: str) -> Any:
    scorer = _scorers.get(key)
    if scorer is None:
        scorer = _scorers[key] = rouge_scorer.RougeScorer([key], use_stemmer=False)
    return scorer
