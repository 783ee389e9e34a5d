"""IFBench's rules over sentences: Google's regex sentences (:func:`.tokens.regex_sentences`), which
every IFBench checker that reads sentences splits with (``instructions_util.split_into_sentences``).

A sentence is whatever the splitter cuts: ". ! ?" end one (so "?!" ends two, the second being "!"),
"Mr." and "3.5" do not, a newline is a space. Counts of words inside a sentence are whitespace
splits unless the rule says otherwise. See :mod:`.ifbench` for the family's conventions.
"""

from __future__ import annotations

from typing import Any

from rewardhub.errors import VerifierError

from .constraints import Verdict
from .ifbench import _NO_PUNCTUATION, _STRIP, IFBENCH, Percent
from .rules import Count, Text, instruction
from .tokens import regex_sentences

__all__: list[str] = []  # the rules register themselves in rules.RULES


def _endings(text: str) -> dict[str, int]:
    found = regex_sentences(text)
    return {mark: sum(1 for sentence in found if sentence.endswith(mark)) for mark in ".?!"}


@instruction("ratio:sentence_type", IFBENCH)
def sentence_type_ratio(text: str) -> Verdict:
    """SentTypeRatioChecker: twice as many sentences end in "." as in "?" (none of either passes)."""
    ends = _endings(text)
    return Verdict(ends["."] == 2 * ends["?"], ends)


@instruction("ratio:sentence_balance", IFBENCH)
def sentence_balance(text: str) -> Verdict:
    """SentBalanceChecker: as many sentences end in "." as in "?" and in "!" (none of each passes)."""
    ends = _endings(text)
    return Verdict(ends["."] == ends["?"] == ends["!"], ends)


@instruction("ratio:sentence_words", IFBENCH)
def same_length_sentences(text: str) -> Verdict:
    """CharacterCountUniqueWordsChecker: exactly three sentences of the same number of characters
    (that the words differ, as the prompt asks, is not checked)."""
    found = regex_sentences(text)
    lengths = [len(sentence.strip()) for sentence in found]
    return Verdict(len(found) == 3 and len(set(lengths)) == 1, lengths)


@instruction("sentence:keyword", IFBENCH)
def keyword_in_sentence(text: str, word: Text, N: Count) -> Verdict:  # noqa: N803 (the dataset's kwarg)
    """IncludeKeywordChecker: the ``N``-th sentence holds ``word`` as a substring, any case (``N: 0``
    reads the last sentence, as Python's index -1 does in IFBench's code)."""
    found = regex_sentences(text)
    if len(found) < N:
        return Verdict(False, {"sentences": len(found)})
    if not found:
        return Verdict(False, "no sentence (IFBench's checker raises)")
    return Verdict(word.lower() in found[N - 1].lower(), found[N - 1][:60])


@instruction("sentence:increment", IFBENCH)
def incrementing_word_count(text: str, small_n: Count) -> Verdict:
    """IncrementingWordCountChecker: each sentence has exactly ``small_n`` more words (punctuation
    removed, whitespace split) than the one before."""
    found = regex_sentences(text)
    if not found:
        return Verdict(False, "no sentence (IFBench's checker raises)")
    counts = [len(sentence.translate(_NO_PUNCTUATION).split()) for sentence in found]
    for before, after in zip(counts, counts[1:], strict=False):
        if after != before + small_n:
            return Verdict(False, counts)
    return Verdict(True, counts)


@instruction("sentence:alliteration_increment", IFBENCH)
def incrementing_alliteration(text: str) -> Verdict:
    """IncrementingAlliterationChecker: each sentence's alliteration score is above the previous one's
    (the first must be at least 0): a run of k words sharing a first letter (lower-cased, leading
    punctuation stripped) scores k, and runs add up."""
    previous = -1
    scores = []
    for sentence in regex_sentences(text):
        words = [w for w in (word.lstrip(_STRIP) for word in sentence.lower().split()) if w]
        score, in_run = 0, False
        for first, second in zip(words, words[1:], strict=False):
            if first[0] == second[0]:
                score += 1 if in_run else 2
                in_run = True
            else:
                in_run = False
        scores.append(score)
        if score <= previous:
            return Verdict(False, scores)
        previous = score
    return Verdict(True, scores)


@instruction("words:last_first", IFBENCH)
def last_word_first(text: str) -> Verdict:
    """LastWordFirstNextChecker: each sentence's last word (trailing punctuation stripped) is the next
    one's first word (leading punctuation stripped), any case. A sentence of punctuation alone between
    two others makes IFBench's checker raise: not followed."""
    found = regex_sentences(text)
    for sentence, following in zip(found, found[1:], strict=False):
        last = sentence.rstrip(_STRIP).split()
        first = following.lstrip(_STRIP).split()
        if not last or not first:
            return Verdict(False, "a sentence without words (IFBench's checker raises)")
        if last[-1].lower() != first[0].lower():
            return Verdict(False, f"{last[-1]} / {first[0]}")
    return Verdict(True, None)


def _emoji() -> Any:
    try:
        import emoji
    except ImportError:
        raise VerifierError(
            "instruction 'format:emoji' reads emoji with the emoji package, as IFBench does: "
            "install the ifbench extra (pip install 'rewardhub[ifbench]')"
        ) from None
    return emoji


@instruction("format:emoji", IFBENCH)
def emoji_per_sentence(text: str) -> Verdict:
    """EmojiSentenceChecker: every sentence ends with an emoji (its last or second-to-last character
    once ASCII punctuation is removed), or, but for the last, the next sentence starts with one (a
    sentence cut after "?!" lets the emoji follow the marks). An empty sentence fails."""
    is_emoji = _emoji().is_emoji
    found = regex_sentences(text)
    for index, sentence in enumerate(found):
        stripped = sentence.translate(_NO_PUNCTUATION).strip()
        if not stripped:
            return Verdict(False, {"sentence": index + 1, "empty": True})
        if is_emoji(stripped[-1]) or is_emoji(stripped[-2] if len(stripped) > 1 else stripped[-1]):
            continue
        if index == len(found) - 1:
            return Verdict(False, {"sentence": index + 1})
        following = found[index + 1].translate(_NO_PUNCTUATION).strip()
        if not following or not is_emoji(following[0]):
            return Verdict(False, {"sentence": index + 1})
    return Verdict(True, None)


def _trigrams(text: str) -> set[str]:
    """The distinct character trigrams: ``set(nltk.ngrams(text, 3))``, as strings (NLTK stays unimported)."""
    return {text[i : i + 3] for i in range(len(text) - 2)}


@instruction("ratio:overlap", IFBENCH)
def trigram_overlap(text: str, reference_text: Text, percentage: Percent) -> Verdict:
    """NGramOverlapChecker: the share of the response's distinct character trigrams that also occur in
    ``reference_text`` is ``percentage`` ± 2 points. Under three characters there is no trigram and
    IFBench's checker divides by zero: not followed."""
    mine = _trigrams(text)
    if not mine:
        return Verdict(False, "no trigram (IFBench's checker divides by zero)")
    overlap = len(mine & _trigrams(reference_text)) / len(mine)
    return Verdict(percentage - 2 <= overlap * 100 <= percentage + 2, round(overlap * 100, 2))
