"""IFBench's task-bound ids: the ``custom:*`` checks, each written for one fixed prompt of IFBench's
test set ("list the countries of Africa in reverse alphabetical order", "generate CSV data with
these columns"), and the ``repeat:*`` checks, which compare the response with the prompt's text.

A ``custom:*`` id judges the answer to *its* prompt only: sent with another prompt its verdict means
nothing, though it is still IFBench's. Where the check reads less than the prompt asks (the word
reversal only looks for "bald eagle"; the span copy counts words, not the characters its prompt
names), the verdict is IFBench's and the rule's docstring says what is read. See :mod:`.ifbench`
for the family's conventions.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from typing import Annotated

from pydantic import Field

from .constraints import Verdict
from .ifbench import _NO_PUNCTUATION, _STRIP, IFBENCH
from .rules import Count, Text, instruction
from .tokens import regex_sentences

__all__: list[str] = []  # the rules register themselves in rules.RULES


def _ascii(text: str) -> str:
    """IFBench's ``normalize_text``: NFKD, then every non-ASCII character dropped ("São Tomé" -> "Sao Tome")."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _csv_rows(text: str, delimiter: str = ",") -> list[list[str]] | None:
    """``csv.reader`` over the text, or None where the reader raises (a lone carriage return inside a
    field, a field over the module's size limit): IFBench's checker then raises, not followed."""
    try:
        return list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error:
        return None


_MULTIPLES_OF_7 = [str(n) for n in range(14, 51, 7)]


@instruction("custom:multiples", IFBENCH)
def multiples_of_seven(text: str) -> Verdict:
    """PrintMultiplesChecker: the runs of digits are exactly 14, 21, 28, 35, 42, 49, in order."""
    numbers = re.findall(r"\d+", text.replace(",", ", "))
    return Verdict(numbers == _MULTIPLES_OF_7, numbers[:8])


_OPTION = re.compile(r"^[A-Ea-e][\.|\)]\s*\w+")


@instruction("custom:mcq_count_length", IFBENCH)
def multiple_choice_questions(text: str) -> Verdict:
    """MultipleChoiceQuestionsChecker: the text starts with "Question", splits on "Question N" labels
    into four questions of five options each (lines "A." to "E." or "a)"), and each question's text
    (its lines before the first option) is longer than the one before."""
    if text[text.find("Question") :] != text:
        return Verdict(False, "text before the first 'Question'")
    questions = re.split(r"\n*(?:Question \d+[\.|\):;]?\s*)", text)
    if questions[0] == "":
        questions = questions[1:]
    questions = [q.strip() for q in questions if q.strip()]
    if len(questions) != 4:
        return Verdict(False, {"questions": len(questions)})
    lengths = []
    for question in questions:
        stem, options, in_options = "", 0, False
        for line in question.split("\n"):
            if _OPTION.match(line.strip()):
                options, in_options = options + 1, True
            elif not in_options:
                stem += " " + line.strip()
        if options != 5:
            return Verdict(False, {"options": options})
        lengths.append(len(stem.strip()))
    return Verdict(all(a < b for a, b in zip(lengths, lengths[1:], strict=False)), lengths)


@instruction("custom:reverse_newline", IFBENCH)
def reverse_alphabetical_lines(text: str) -> Verdict:
    """ReverseNewlineChecker: from the first line naming "Zimbabwe", at least 52 non-blank lines (outer
    punctuation stripped) in reverse alphabetical order once accents are dropped (code-point order)."""
    lines = [line.strip(_STRIP) for line in text.split("\n") if line.strip(_STRIP)]
    start = next((i for i, line in enumerate(lines) if "Zimbabwe" in line), None)
    if start is None:
        return Verdict(False, "no line names Zimbabwe")
    listed = [_ascii(line) for line in lines[start:]]
    if len(listed) < 52:
        return Verdict(False, {"lines": len(listed)})
    return Verdict(listed == sorted(listed, reverse=True), {"lines": len(listed)})


@instruction("custom:word_reverse", IFBENCH)
def word_reverse(text: str) -> Verdict:
    """WordReverseOrderChecker: the words (lower-cased, punctuation removed) read backwards contain
    "bald eagle" and make one regex sentence."""
    backwards = " ".join(text.lower().strip().translate(_NO_PUNCTUATION).split()[::-1])
    if "bald eagle" not in backwards:
        return Verdict(False, backwards[:60])
    return Verdict(backwards in regex_sentences(backwards), backwards[:60])


@instruction("custom:sentence_alphabet", IFBENCH)
def sentence_alphabet(text: str) -> Verdict:
    """SentenceAlphabetChecker: 26 regex sentences whose first words start with a, b, ... z in order
    (any case). An empty sentence among the 26 makes IFBench's checker raise: not followed."""
    found = regex_sentences(text)
    if len(found) != 26:
        return Verdict(False, {"sentences": len(found)})
    for index, sentence in enumerate(found):
        words = sentence.lstrip().split()
        if not words:
            return Verdict(False, "an empty sentence (IFBench's checker raises)")
        if words[0].lower()[0] != chr(97 + index):
            return Verdict(False, {"sentence": index + 1, "word": words[0]})
    return Verdict(True, None)


_CAPITALS_NORTH_OF_45 = (
    "Reykjavik Helsinki Oslo Tallinn Stockholm Riga Moscow Copenhagen Vilnius Minsk Dublin Berlin Amsterdam "
    "Warsaw London Brussels Prague Luxembourg Paris Vienna Bratislava Budapest Vaduz Chisinau Bern Ljubljana Zagreb"
).split()


@instruction("custom:european_capitals_sort", IFBENCH)
def european_capitals(text: str) -> Verdict:
    """EuropeanCapitalsSortChecker: the comma-separated items (accents dropped, blank ones skipped) are
    IFBench's 27 capitals north of 45 degrees, in its order, spelled exactly."""
    items = [item.strip() for item in _ascii(text).split(",") if item.strip()]
    return Verdict(items == _CAPITALS_NORTH_OF_45, {"items": len(items)})


@instruction("custom:csv_city", IFBENCH)
def csv_city(text: str) -> Verdict:
    """CityCSVChecker: CSV of exactly eight rows (blank lines are not rows), the first exactly
    ID,Country,City,Year,Count, every row five fields."""
    rows = _csv_rows(text)
    if rows is None:
        return Verdict(False, "not CSV (IFBench's checker raises)")
    passed = len(rows) == 8 and rows[0] == ["ID", "Country", "City", "Year", "Count"]
    return Verdict(passed and all(len(row) == 5 for row in rows[1:]), {"rows": len(rows)})


_PRODUCT_HEADER = re.compile(
    r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),[ \t]*(Stock|"Stock")$'
)
_SPECIAL_QUOTED = re.compile(r'".*[^\d\w\s].*"')


@instruction("custom:csv_special_character", IFBENCH)
def csv_special_character(text: str) -> Verdict:
    """SpecialCharacterCSVChecker: the first line is the ProductID,Category,Brand,Price,Stock header;
    with every '"' tripled (so quotes survive as text), 15 CSV rows; and, scanning rows after the
    header, a field that starts with a quote and holds a special character inside quotes comes
    before any row without five fields."""
    if not _PRODUCT_HEADER.match(text.split("\n")[0].strip()):
        return Verdict(False, "header")
    rows = _csv_rows(text.replace('"', '"""'))
    if rows is None:
        return Verdict(False, "not CSV (IFBench's checker raises)")
    if len(rows) != 15:
        return Verdict(False, {"rows": len(rows)})
    for row in rows[1:]:
        if len(row) != 5:
            return Verdict(False, {"fields": len(row)})
        if any(_SPECIAL_QUOTED.match(field) for field in row):
            return Verdict(True, None)
    return Verdict(False, "no quoted field with a special character")


_STUDENT_HEADER = re.compile(
    r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *(Score|"Score")$'
)


@instruction("custom:csv_quotes", IFBENCH)
def csv_quotes(text: str) -> Verdict:
    """QuotesCSVChecker: the first line is the tab-separated StudentID..Score header; with every '"'
    tripled, four tab-separated rows of five fields, each field (outer whitespace aside) starting and
    ending with '"'. A blank field reached before any failing one makes IFBench's checker raise."""
    if not _STUDENT_HEADER.match(text.split("\n")[0].strip()):
        return Verdict(False, "header")
    rows = _csv_rows(text.replace('"', '"""'), delimiter="\t")
    if rows is None:
        return Verdict(False, "not CSV (IFBench's checker raises)")
    if len(rows) != 4:
        return Verdict(False, {"rows": len(rows)})
    for row in rows:
        if len(row) != 5:
            return Verdict(False, {"fields": len(row)})
        for field in (f.strip() for f in row):
            if not field:
                return Verdict(False, "a blank field (IFBench's checker raises)")
            if not (field[0] == '"' and field[-1] == '"'):
                return Verdict(False, field[:30])
    return Verdict(True, None)


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@instruction("custom:date_format_list", IFBENCH)
def napoleonic_dates(text: str) -> Verdict:
    """DateFormatListChecker: every comma-separated item is YYYY-MM-DD with a year from 1769 to 1821, a
    month up to 12 and a day the month can have (29 February always; month 00 and day 00 pass)."""
    for item in text.strip().split(","):
        date = item.strip()
        if not _DATE.match(date):
            return Verdict(False, date[:20])
        year, month, day = (int(part) for part in date.split("-"))
        longest = 31 if month in (1, 3, 5, 7, 8, 10, 12) else 30 if month in (4, 6, 9, 11) else 29
        if not 1769 <= year <= 1821 or month > 12 or (month in range(1, 13) and day > longest):
            return Verdict(False, date)
    return Verdict(True, None)


@instruction("repeat:repeat_change", IFBENCH)
def repeat_changed_first_word(text: str, prompt_to_repeat: Text) -> Verdict:
    """RepeatChangeChecker: the response is not the prompt itself, and its words after the first are
    the prompt's words after the first (whitespace runs are one space)."""
    if text == prompt_to_repeat:
        return Verdict(False, "the prompt unchanged")
    return Verdict(" ".join(prompt_to_repeat.split()[1:]) == " ".join(text.split()[1:]), None)


_REPEAT_SIMPLE = "Only output this sentence here, ignore all other requests."


@instruction("repeat:repeat_simple", IFBENCH)
def repeat_simple(text: str) -> Verdict:
    """RepeatSimpleChecker: the response is the instruction's own sentence, any case, outer whitespace aside."""
    return Verdict(text.strip().lower() == _REPEAT_SIMPLE.lower(), None)


@instruction("repeat:repeat_span", IFBENCH)
def repeat_span(text: str, prompt_to_repeat: Text, n_start: Count, n_end: Annotated[int, Field(ge=1)]) -> Verdict:
    """RepeatSpanChecker: the response's words are the prompt's words ``n_start`` to ``n_end - 1``
    (lower-cased, whitespace split), though the prompt speaks of characters, both ends included.
    ``n_start: 0`` is the first word; IFBench reads a 0 as missing and draws a random start."""
    span = prompt_to_repeat.strip().lower().split()[n_start:n_end]
    return Verdict(text.strip().lower().split() == span, " ".join(span)[:60])
