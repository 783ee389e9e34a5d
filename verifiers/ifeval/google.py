"""IFEval's 25 instructions, each checked by the rule of Google's released checker.

Source of the rules: ``instruction_following_eval/instructions.py`` (google-research, 2023), as
lm-eval ships it (``lm_eval/tasks/ifeval/instructions.py``, lm-eval 0.4.13); tests compare every
verdict with that code. Google's rules are kept where they surprise, because a user switching from
IFEval expects IFEval's numbers:

- keywords (``keywords:existence``, ``keywords:frequency``) are case-insensitive *regular
  expressions* searched anywhere: "war" is found in "toward", "a.b" matches "axb";
  ``keywords:forbidden_words`` alone requires word boundaries (``\\bword\\b``);
- words are runs of ``\\w``; sentences are NLTK Punkt sentences; ``change_case:capital_word_frequency``
  counts upper-case NLTK word tokens ("DON'T" is two);
- ``change_case:english_*`` also requires langdetect to say English, and a text langdetect cannot
  read at all ("No features in text") passes, as ``language:response_language`` does;
- paragraphs are split on ``***`` (``number_paragraphs``) but on blank lines
  (``nth_paragraph_first_word``); a postscript marker is searched anywhere, not at a line start.

Where Google's checker would raise (a keyword that is not a valid regular expression) the sample is
an ``error``; where it would draw a random value (a kwarg missing) too, see :mod:`.rules`.
"""

from __future__ import annotations

import json
import re

from rewardhub.errors import VerifierError

from .constraints import Verdict
from .rules import Count, Relation, Text, Words, compare, instruction
from .tokens import LanguageUnknown, count_words, detect_language, languages, sentences, word_tokens

__all__: list[str] = []  # the rules register themselves in rules.RULES

IFEVAL = "IFEval"


def _pattern(kwarg: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise VerifierError(
            f"kwarg {kwarg} {pattern!r} is not a regular expression ({exc}), as IFEval reads it"
        ) from None


def _is_language(text: str, code: str) -> tuple[bool, str]:
    try:
        found = detect_language(text)
    except LanguageUnknown:
        return True, "undetectable"  # Google's checker: a text langdetect cannot read passes
    return found == code, found


@instruction("keywords:existence", IFEVAL)
def keywords_existence(text: str, keywords: Words) -> Verdict:
    missing = [k for k in sorted(keywords) if not _pattern("keywords", k, re.IGNORECASE).search(text)]
    return Verdict(not missing, {"missing": missing})


@instruction("keywords:frequency", IFEVAL)
def keywords_frequency(text: str, keyword: Text, frequency: Count, relation: Relation) -> Verdict:
    count = len(_pattern("keyword", keyword.strip(), re.IGNORECASE).findall(text))
    return Verdict(compare(count, relation, frequency), count)


@instruction("keywords:forbidden_words", IFEVAL)
def keywords_forbidden_words(text: str, forbidden_words: Words) -> Verdict:
    found = [
        w for w in sorted(set(forbidden_words)) if _pattern("forbidden_words", rf"\b{w}\b", re.IGNORECASE).search(text)
    ]
    return Verdict(not found, {"forbidden": found})


@instruction("keywords:letter_frequency", IFEVAL)
def keywords_letter_frequency(text: str, letter: Text, let_frequency: Count, let_relation: Relation) -> Verdict:
    if len(letter) != 1 or not ("a" <= letter.lower() <= "z"):
        raise VerifierError(f"kwarg letter {letter!r} must be one ASCII letter (IFEval would pick one at random)")
    count = text.lower().count(letter.lower())
    return Verdict(compare(count, let_relation, let_frequency), count)


@instruction("language:response_language", IFEVAL)
def language_response_language(text: str, language: Text) -> Verdict:
    if language not in languages():
        raise VerifierError(f"kwarg language {language!r} is not a language langdetect knows")
    passed, found = _is_language(text, language)
    return Verdict(passed, found)


@instruction("length_constraints:number_sentences", IFEVAL)
def number_sentences(text: str, num_sentences: Count, relation: Relation) -> Verdict:
    count = len(sentences(text))
    return Verdict(compare(count, relation, num_sentences), count)


def _star_paragraphs(text: str) -> int | None:
    """Paragraphs between ``***`` dividers; None when an inner one is empty (never the right count)."""
    pieces = re.split(r"\s?\*\*\*\s?", text)
    count = len(pieces)
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return None
            count -= 1
    return count


@instruction("length_constraints:number_paragraphs", IFEVAL)
def number_paragraphs(text: str, num_paragraphs: Count) -> Verdict:
    count = _star_paragraphs(text)
    return Verdict(count == num_paragraphs, count if count is not None else "empty paragraph between dividers")


@instruction("length_constraints:number_words", IFEVAL)
def number_words(text: str, num_words: Count, relation: Relation) -> Verdict:
    count = count_words(text)
    return Verdict(compare(count, relation, num_words), count)


_FIRST_WORD_STOP = frozenset(".,?!'\"")


@instruction("length_constraints:nth_paragraph_first_word", IFEVAL)
def nth_paragraph_first_word(text: str, num_paragraphs: Count, nth_paragraph: Count, first_word: Text) -> Verdict:
    if not 0 < nth_paragraph <= num_paragraphs:
        raise VerifierError(
            f"kwarg nth_paragraph {nth_paragraph} is not in 1..num_paragraphs (IFEval would pick one at random)"
        )
    blocks = text.split("\n\n")
    count = sum(1 for block in blocks if block.strip())
    # Google indexes the raw blocks (empty ones included) with the count of the non-empty ones
    paragraph = blocks[nth_paragraph - 1].strip() if nth_paragraph <= count else ""
    if not paragraph:
        return Verdict(False, {"paragraphs": count, "first_word": None})
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    head = ""
    for char in word:
        if char in _FIRST_WORD_STOP:
            break
        head += char.lower()
    return Verdict(count == num_paragraphs and head == first_word.lower(), {"paragraphs": count, "first_word": head})


@instruction("detectable_content:number_placeholders", IFEVAL)
def number_placeholders(text: str, num_placeholders: Count) -> Verdict:
    count = len(re.findall(r"\[.*?\]", text))
    return Verdict(count >= num_placeholders, count)


_PS_PATTERNS = {"P.P.S": r"\s*p\.\s?p\.\s?s.*$", "P.S.": r"\s*p\.\s?s\..*$"}


@instruction("detectable_content:postscript", IFEVAL)
def postscript(text: str, postscript_marker: Text) -> Verdict:
    marker = postscript_marker.strip()
    pattern = _PS_PATTERNS.get(marker) or r"\s*" + marker.lower() + ".*$"
    found = _pattern("postscript_marker", pattern, re.MULTILINE).search(text.lower())
    return Verdict(found is not None, found is not None)


@instruction("detectable_format:number_bullet_lists", IFEVAL)
def number_bullet_lists(text: str, num_bullets: Count) -> Verdict:
    stars = re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)
    count = len(stars) + len(dashes)
    return Verdict(count == num_bullets, count)


_CONSTRAINED = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@instruction("detectable_format:constrained_response", IFEVAL)
def constrained_response(text: str) -> Verdict:
    found = next((option for option in _CONSTRAINED if option in text.strip()), None)
    return Verdict(found is not None, found)


@instruction("detectable_format:number_highlighted_sections", IFEVAL)
def number_highlighted_sections(text: str, num_highlights: Count) -> Verdict:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", text) if h.removeprefix("**").removesuffix("**").strip()]
    count = len(single) + len(double)  # a blank highlight ("* *") is not one
    return Verdict(count >= num_highlights, count)


@instruction("detectable_format:multiple_sections", IFEVAL)
def multiple_sections(text: str, section_spliter: Text, num_sections: Count) -> Verdict:
    splitter = _pattern("section_spliter", r"\s?" + section_spliter.strip() + r"\s?\d+\s?")
    count = len(splitter.split(text)) - 1
    return Verdict(count >= num_sections, count)


@instruction("detectable_format:json_format", IFEVAL)
def json_format(text: str) -> Verdict:
    body = text.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except (ValueError, RecursionError) as exc:
        return Verdict(False, str(exc)[:100])
    return Verdict(True, "valid JSON")


@instruction("detectable_format:title", IFEVAL)
def title(text: str) -> Verdict:
    titles = [t for t in re.findall(r"<<[^\n]+>>", text) if t.lstrip("<").rstrip(">").strip()]
    return Verdict(bool(titles), titles[0] if titles else None)


@instruction("combination:two_responses", IFEVAL)
def two_responses(text: str) -> Verdict:
    pieces = text.split("******")
    answers = []
    for index, piece in enumerate(pieces):
        if piece.strip():
            answers.append(piece)
        elif index not in (0, len(pieces) - 1):
            return Verdict(False, "empty response between separators")
    distinct = len(answers) == 2 and answers[0].strip() != answers[1].strip()
    return Verdict(distinct, len(answers))


@instruction("combination:repeat_prompt", IFEVAL)
def repeat_prompt(text: str, prompt_to_repeat: Text) -> Verdict:
    head = prompt_to_repeat.strip().lower()
    return Verdict(text.strip().lower().startswith(head), text.strip()[: len(head)])


@instruction("startend:end_checker", IFEVAL)
def end_checker(text: str, end_phrase: Text) -> Verdict:
    phrase = end_phrase.strip().lower()
    body = text.strip().strip('"').lower()
    return Verdict(body.endswith(phrase), body[-len(phrase) :] if phrase else "")


@instruction("change_case:capital_word_frequency", IFEVAL)
def capital_word_frequency(text: str, capital_frequency: Count, capital_relation: Relation) -> Verdict:
    count = sum(1 for token in word_tokens(text) if token.isupper())
    return Verdict(compare(count, capital_relation, capital_frequency), count)


@instruction("change_case:english_capital", IFEVAL)
def english_capital(text: str) -> Verdict:
    if not text.isupper():
        return Verdict(False, "not all capitals")
    passed, found = _is_language(text, "en")
    return Verdict(passed, found)


@instruction("change_case:english_lowercase", IFEVAL)
def english_lowercase(text: str) -> Verdict:
    if not text.islower():
        return Verdict(False, "not all lowercase")
    passed, found = _is_language(text, "en")
    return Verdict(passed, found)


@instruction("punctuation:no_comma", IFEVAL)
def no_comma(text: str) -> Verdict:
    return Verdict("," not in text, text.count(","))


@instruction("startend:quotation", IFEVAL)
def quotation(text: str) -> Verdict:
    body = text.strip()
    return Verdict(len(body) > 1 and body[0] == '"' and body[-1] == '"', body[:1] + "…" + body[-1:])
