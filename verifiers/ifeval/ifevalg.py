"""The IFEvalG instructions RL data adds to IFEval's 25 (``verifiable_instructions``).

These are the "new" constraints of AllenAI's open-instruct IFEvalG (the RLVR-IFeval training data
of Tulu 3), as NeMo-Gym's ``instruction_following`` server checks them: with the
``verifiable_instructions`` package (github.com/abukharin-nv/verifiable-instructions, commit
f46a5ac, ``verifiable_instructions/instructions.py``), whose IFEval ids are Google's rules unchanged
(:mod:`.google` serves them). No registry package ships that code, so each rule below is transcribed
from it, its class named in the docstring; the tests pin the rules with cases worked out from that
source and with NeMo-Gym's own example rollouts.

The transcriptions keep the reference's quirks, because a user switching over expects its rewards:
sentences are Google's regex sentences (:func:`.tokens.regex_sentences`), words are
whitespace-split unless a rule says NLTK tokens, keywords are case-insensitive regular
expressions. Where the reference raises on a response (``value.split()[-1]`` of an empty text),
NeMo-Gym records "not followed", and so does the rule here. Where the reference draws a random
value (a falsy kwarg), the kwarg is required, except that a 0 is read as 0: ``new:copy_span_idx``
with ``n_start: 0`` copies from the start (the reference would draw a random start).
"""

from __future__ import annotations

import re

from .constraints import Verdict
from .google import _pattern, _star_paragraphs, keywords_frequency, keywords_letter_frequency
from .rules import Count, Relation, Text, compare, instruction
from .tokens import regex_sentences, word_tokens

__all__: list[str] = []

IFEVALG = "IFEvalG"


def _same(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


@instruction("copy:repeat_phrase", IFEVALG)
def repeat_phrase(text: str, phrase: Text, small_n: Count) -> Verdict:
    """RepeatPhraseChecker: ``small_n`` spans from the phrase's first to its last word, each the
    phrase with exactly one word changed (the reference checks "exactly one" on the last span only)."""
    words = phrase.strip().split()
    found = _pattern("phrase", f"{words[0]} .*? {words[-1]}").findall(text)
    if len(found) != small_n or not found:
        return Verdict(False, len(found))
    differences = 0
    for span in found:
        span_words = span.split()
        if len(span_words) != len(words):
            return Verdict(False, len(found))
        differences = sum(a != b for a, b in zip(span_words, words, strict=True))
        if differences > 1:
            return Verdict(False, len(found))
    return Verdict(differences == 1, len(found))


@instruction("copy:copy", IFEVALG)
def copy_prompt(text: str, prompt_to_repeat: Text) -> Verdict:
    """CopyChecker: the response is the prompt, ignoring case and surrounding whitespace."""
    return Verdict(_same(text, prompt_to_repeat), len(text.strip()))


@instruction("copy:copying_simple", IFEVALG)
def copying_simple(text: str, prompt_to_repeat: Text) -> Verdict:
    """CopyingSimpleChecker: the same rule as ``copy:copy``."""
    return Verdict(_same(text, prompt_to_repeat), len(text.strip()))


@instruction("copy:copying_multiple", IFEVALG)
def copying_multiple(text: str, prompt_to_repeat: Text, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """CopyingMultipleChecker: exactly ``N`` pieces between ``******`` separators, each the prompt."""
    pieces = text.split("******")
    return Verdict(len(pieces) == N and all(_same(p, prompt_to_repeat) for p in pieces), len(pieces))


@instruction("new:copy_span_idx", IFEVALG)
def copy_span_idx(text: str, prompt_to_repeat: Text, n_start: Count, n_end: Count) -> Verdict:
    """CopySpanIdxChecker: the response is ``prompt_to_repeat[n_start:n_end]`` (case and outer spaces aside)."""
    return Verdict(_same(text, prompt_to_repeat[n_start:n_end]), len(text.strip()))


@instruction("detectable_format:sentence_hyphens", IFEVALG)
def sentence_hyphens(text: str) -> Verdict:
    """SentenceHyphenChecker: the sentences are joined by hyphens with no spaces around them
    (each ``-`` piece equals the matching regex sentence of the text with hyphens as spaces)."""
    gold = regex_sentences(text.replace("-", " "))
    for piece, sentence in zip(text.split("-"), gold, strict=False):
        if piece.strip() != piece or piece != sentence:
            return Verdict(False, piece[:40])
    return Verdict(True, None)


@instruction("keywords:no_adjacent_consecutive", IFEVALG)
def no_adjacent_consecutive(text: str) -> Verdict:
    """AdjacentLetterChecker: no two neighbouring words start with consecutive letters ("a" then "b")."""
    words = text.split()
    for first, second in zip(words, words[1:], strict=False):
        a, b = first[0].lower(), second[0].lower()
        if len(a) != 1 or len(b) != 1 or ord(b) - ord(a) == 1:
            return Verdict(False, f"{first} {second}")
    return Verdict(True, None)


@instruction("detectable_format:square_brackets", IFEVALG)
def square_brackets(text: str) -> Verdict:
    """SquareBracketChecker: every whitespace-separated word is wrapped in ``[...]``."""
    bare = [w for w in text.split() if not (w.startswith("[") and w.endswith("]"))]
    return Verdict(not bare, bare[:3])


@instruction("keywords:word_once", IFEVALG)
def word_once(text: str, keyword: Text) -> Verdict:
    """KeywordFrequencyOnceChecker: the keyword (a case-insensitive regex) occurs exactly once."""
    count = len(_pattern("keyword", keyword.strip(), re.IGNORECASE).findall(text))
    return Verdict(count == 1, count)


@instruction("keywords:word_count_different_numbers", IFEVALG)
def word_count_different_numbers(text: str, keyword: Text, frequency: Count, relation: Relation) -> Verdict:
    """KeywordFrequencyCheckerDifferent: the rule of IFEval's ``keywords:frequency``."""
    return keywords_frequency(text, keyword, frequency, relation)


@instruction("letters:letter_counting2", IFEVALG)
def letter_counting2(text: str, letter: Text, let_frequency: Count, let_relation: Relation) -> Verdict:
    """LetterFrequencyChecker: the rule of IFEval's ``keywords:letter_frequency``."""
    return keywords_letter_frequency(text, letter, let_frequency, let_relation)


@instruction("keywords:exclude_word_harder", IFEVALG)
def exclude_word_harder(text: str, keyword: Text, instruction: str | None = None) -> Verdict:
    """ExcludeWordHarderChecker: the keyword never appears with a space on each side (``instruction``,
    which the reference draws a random keyword from when none is given, is accepted and unused)."""
    found = f" {keyword.strip()} " in text
    return Verdict(not found, found)


@instruction("paragraphs:paragraphs", IFEVALG)
def paragraphs(text: str) -> Verdict:
    """ParagraphBasicChecker: exactly 2 paragraphs between ``***`` dividers (IFEval's counting)."""
    count = _star_paragraphs(text)
    return Verdict(count == 2, count)


@instruction("paragraphs:paragraphs2", IFEVALG)
def paragraphs2(text: str) -> Verdict:
    """ParagraphBasicChecker2: exactly 2 paragraphs separated by a blank line (``\\n\\n``); an empty
    inner one fails, an empty first or last one does not count."""
    pieces = text.split("\n\n")
    count = len(pieces)
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return Verdict(False, "empty paragraph")
            count -= 1
    return Verdict(count == 2, count)


@instruction("first_word:first_word_sent", IFEVALG)
def first_word_sent(text: str, first_word: Text) -> Verdict:
    """FirstWordSentChecker: every regex sentence starts with ``first_word`` (case-insensitive, the
    whitespace-split first word, punctuation included)."""
    for sentence in regex_sentences(text):
        if not sentence.strip() or sentence.split()[0].lower() != first_word.strip().lower():
            return Verdict(False, sentence[:40])
    return Verdict(True, None)


@instruction("first_word:first_word_answer", IFEVALG)
def first_word_answer(text: str, first_word: Text) -> Verdict:
    """FirstWordAnswerChecker: the response's first whitespace-split word is ``first_word`` (any case)."""
    words = text.split()
    head = words[0] if words else None
    return Verdict(head is not None and head.lower() == first_word.strip().lower(), head)


def _last_word(sentence: str) -> str:
    return re.sub(r"[^\w\s]", "", sentence.split()[-1].strip())


@instruction("last_word:last_word_sent", IFEVALG)
def last_word_sent(text: str, last_word: Text | list[str]) -> Verdict:
    """LastWordSentChecker: every regex sentence ends with ``last_word`` (any case, punctuation
    removed); a list gives its first word, as the reference reads it."""
    word = (last_word[0] if isinstance(last_word, list) else last_word).strip().lower()
    for sentence in regex_sentences(text):
        if not sentence.strip() or _last_word(sentence).lower() != word:
            return Verdict(False, sentence[-40:])
    return Verdict(True, None)


@instruction("last_word:last_word_answer", IFEVALG)
def last_word_answer(text: str, last_word: Text) -> Verdict:
    """LastWordAnswerChecker: the response's last whitespace-split word, punctuation removed, is
    ``last_word`` (any case); an empty response is not followed (the reference raises)."""
    if not text.split():
        return Verdict(False, None)
    tail = _last_word(text)
    return Verdict(tail.lower() == last_word.strip().lower(), tail)


@instruction("detectable_format:bigram_wrapping", IFEVALG)
def bigram_wrapping(text: str) -> Verdict:
    """BiGramWrappingChecker: each pair of words is wrapped as ``<<first second>>`` (an odd last
    word is left alone)."""
    words = text.split()
    for i in range(0, len(words) - 1, 2):
        if not (words[i].startswith("<<") and words[i + 1].endswith(">>")):
            return Verdict(False, f"{words[i]} {words[i + 1]}")
    return Verdict(True, None)


@instruction("punctuation:punctuation_dot", IFEVALG)
def punctuation_dot(text: str) -> Verdict:
    """PunctuationDotChecker: no ``.`` at all."""
    return Verdict("." not in text, text.count("."))


@instruction("punctuation:punctuation_exclamation", IFEVALG)
def punctuation_exclamation(text: str) -> Verdict:
    """PunctuationExclamationChecker: no ``!`` at all."""
    return Verdict("!" not in text, text.count("!"))


@instruction("count:lowercase_counting", IFEVALG)
def lowercase_counting(text: str, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """LowercaseCountingChecker: at most ``N`` all-lowercase ASCII words (``\\b[a-z]+\\b``)."""
    count = len(re.findall(r"\b[a-z]+\b", text))
    return Verdict(count <= N, count)


@instruction("letters:letter_counting", IFEVALG)
def letter_counting(text: str, N: Count, relation: Relation) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """LetterCountingChecker: the number of ASCII letters, "at least" or "less than" ``N``."""
    count = len(re.findall(r"[a-zA-Z]", text))
    return Verdict(compare(count, relation, N), count)


@instruction("count:counting_composition", IFEVALG)
def counting_composition(text: str, n_sent: Count, n_words: Count) -> Verdict:
    """CountingCompositionChecker: 3 paragraphs between ``***`` dividers, each of ``n_sent`` regex
    sentences of ``n_words`` NLTK tokens. An empty first or last paragraph fails too: the reference
    counts its sentences (none) before it looks at the total."""
    pieces = re.split(r"\s?\*\*\*\s?", text)
    count = len(pieces)
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return Verdict(False, "empty paragraph")
            count -= 1
        found = regex_sentences(piece)
        if len(found) != n_sent:
            return Verdict(False, {"paragraph": index + 1, "sentences": len(found)})
        for sentence in found:
            if len(word_tokens(sentence)) != n_words:
                return Verdict(False, {"paragraph": index + 1, "sentence": sentence[:40]})
    return Verdict(count == 3, count)


@instruction("count:count_unique", IFEVALG)
def count_unique(text: str) -> Verdict:
    """CountUniqueChecker: no NLTK token (word or punctuation, case-sensitive) repeats."""
    tokens = word_tokens(text)
    return Verdict(len(tokens) == len(set(tokens)), len(tokens) - len(set(tokens)))


@instruction("count:count_increment_word", IFEVALG)
def count_increment_word(text: str, keyword1: Text, keyword2: Text) -> Verdict:
    """CountIncrementWordChecker: ``keyword1`` occurs once and ``keyword2`` twice (case-insensitive regexes)."""
    first = len(_pattern("keyword1", keyword1.strip(), re.IGNORECASE).findall(text))
    second = len(_pattern("keyword2", keyword2.strip(), re.IGNORECASE).findall(text))
    return Verdict(first == 1 and second == 2, [first, second])


@instruction("keywords:palindrome", IFEVALG)
def palindrome(text: str) -> Verdict:
    """PalindromeBasicChecker: some whitespace-split word reads the same reversed (case and
    punctuation count: "a" and "1" do, "Anna" does not)."""
    found = next((w for w in text.split() if w == w[::-1]), None)
    return Verdict(found is not None, found)


@instruction("keywords:keyword_specific_position", IFEVALG)
def keyword_specific_position(text: str, keyword: Text | list[str], n: Count, m: Count) -> Verdict:
    """KeywordSpecificPositionChecker: the ``m``-th NLTK token of the ``n``-th regex sentence is
    ``keyword`` exactly (case-sensitive); a list gives its first word."""
    word = (keyword[0] if isinstance(keyword, list) else keyword).strip()
    found = regex_sentences(text)
    if not 0 < n <= len(found):
        return Verdict(False, {"sentences": len(found)})
    tokens = word_tokens(found[n - 1])
    at = tokens[m - 1] if 0 < m <= len(tokens) else None
    return Verdict(at == word, at)


@instruction("keywords:start_end", IFEVALG)
def start_end(text: str) -> Verdict:
    """StartEndChecker: the first and last NLTK tokens are the same word (any case), 2 tokens at least."""
    tokens = word_tokens(text)
    same = len(tokens) >= 2 and tokens[0].lower() == tokens[-1].lower()
    return Verdict(same, [tokens[0], tokens[-1]] if tokens else None)
