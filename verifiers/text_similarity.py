"""``text_similarity``: the text-similarity grader of reinforcement fine-tuning as a verifier.

The similarity of the response to the reference in [0, 1]: ``fuzzy_match`` (rapidfuzz's
normalised Indel similarity), ``bleu`` (sacreBLEU's sentence BLEU, exponential smoothing),
``gleu`` (NLTK's sentence GLEU) and ``rouge_1`` … ``rouge_5``, ``rouge_l`` (Google's rouge-score
F-measure, no stemming). It does not do ``cosine`` (needs an embedding model) or ``meteor`` (needs
the WordNet corpus, which nothing here downloads).

The metrics come from the libraries named above (the ``graders`` extra); without them a sample
is an ``error`` status that says what to install.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .string_check import reference_text

__all__ = ["SIMILARITY_METRICS", "TextSimilarityVerifier", "similarity"]

Metric = Literal["fuzzy_match", "bleu", "gleu", "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l"]
SIMILARITY_METRICS: tuple[str, ...] = Metric.__args__  # type: ignore[attr-defined]
MAX_CHARS = 100_000


class TextSimilarityVerifier(Verifier):
    """Similarity of the response to the reference in [0, 1]: fuzzy match, BLEU, GLEU or ROUGE."""

    name = "text_similarity"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        metric: Metric = Field("fuzzy_match", description="fuzzy_match, bleu, gleu, rouge_1 ... rouge_5 or rouge_l.")

    @classmethod
    def warm_up(cls) -> None:
        """Import the metrics' libraries in the fork server, so every worker inherits them: a
        worker's first similarity sample would otherwise spend its time limit importing them
        (5-7 s on a loaded machine, more than the default 10 s limit leaves to spare)."""
        try:
            _libraries()
        except VerifierError:  # without the graders extra a sample says what to install
            pass

    def score(self, sample: Sample, config: Config) -> Result:
        reference = reference_text(sample, self.name)
        if len(sample.response) > MAX_CHARS or len(reference) > MAX_CHARS:
            raise VerifierError(f"text_similarity compares texts of at most {MAX_CHARS} characters")
        return Result.ok(similarity(sample.response, reference, config.metric), metric=config.metric)


def similarity(text: str, reference: str, metric: str) -> float:
    """``metric`` of ``text`` against ``reference``, in [0, 1]."""
    if metric not in SIMILARITY_METRICS:
        raise VerifierError(f"unknown similarity metric {metric!r}")
    lib = _libraries()
    if metric == "fuzzy_match":
        return lib.fuzz.ratio(text, reference) / 100.0
    if metric == "bleu":
        return lib.sacrebleu.sentence_bleu(text, [reference]).score / 100.0
    if metric == "gleu":
        return (
            float(lib.sentence_gleu([reference.split()], text.split())) if text.split() and reference.split() else 0.0
        )
    key = "rougeL" if metric == "rouge_l" else "rouge" + metric.removeprefix("rouge_")
    return float(_rouge(key).score(reference, text)[key].fmeasure)


@functools.cache
def _libraries() -> SimpleNamespace:
    """The metrics' libraries, imported on first use rather than with this module: rouge-score and
    NLTK import scipy.stats, about 1.5 CPU-seconds that every process loading the verifier registry
    (the service, its fork server, each Celery worker, each CLI call) paid at start for metrics few
    requests ask for. Only the workers' fork server imports them, in :meth:`warm_up`."""
    try:
        import sacrebleu
        from nltk.translate.gleu_score import sentence_gleu
        from rapidfuzz import fuzz
        from rouge_score import rouge_scorer
    except ImportError as exc:  # pragma: no cover - exercised only without the graders extra
        raise VerifierError(
            "text_similarity needs rapidfuzz, sacrebleu, nltk and rouge-score: pip install 'rewardhub[graders]'"
        ) from exc
    return SimpleNamespace(sacrebleu=sacrebleu, sentence_gleu=sentence_gleu, fuzz=fuzz, rouge_scorer=rouge_scorer)


_scorers: dict[str, Any] = {}


def _rouge(key: str) -> Any:
    scorer = _scorers.get(key)
    if scorer is None:
        scorer = _scorers[key] = _libraries().rouge_scorer.RougeScorer([key], use_stemmer=False)
    return scorer
