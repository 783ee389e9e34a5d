"""IFBench's layout rules: brackets, quotes, answer options, indents, bullets, italics, title case.

Each is IFBench's checker read literally (see :mod:`.ifbench` for the family's conventions), so the
loose ends of its code stay: ``format:list`` finds the separator anywhere, ``format:sub-bullets``
splits on every ``*`` (bold too), ``format:line_indent`` drops blank lines the way a list edited
while it is iterated does.
"""

from __future__ import annotations

import re
import string

from .constraints import Verdict
from .ifbench import _STRIP, IFBENCH
from .rules import Text, instruction
from .tokens import regex_sentences, word_tokens

__all__: list[str] = []  # the rules register themselves in rules.RULES

_PAIRS = {")": "(", "]": "[", "}": "{"}


@instruction("format:parentheses", IFBENCH)
def nested_brackets(text: str) -> Verdict:
    """NestedParenthesesChecker: a bracket closes, with its own kind, a group that reached five open
    brackets of any kinds; a closer that does not match (or has nothing open) starts the count over."""
    stack: list[str] = []
    deepest = 0
    for char in text:
        if char in "([{":
            stack.append(char)
            deepest = max(deepest, len(stack))
        elif char in _PAIRS:
            if stack and stack[-1] == _PAIRS[char]:
                stack.pop()
                if deepest >= 5 and len(stack) < deepest:
                    return Verdict(True, deepest)
            else:
                stack, deepest = [], 0
    return Verdict(False, deepest)


@instruction("format:quotes", IFBENCH)
def nested_quotes(text: str) -> Verdict:
    """NestedQuotesChecker: straight quotes (" and ') nest three deep: a quote closes the innermost
    open one when it is the same mark and opens a new level otherwise; a close three levels below
    the deepest reached passes."""
    stack: list[str] = []
    deepest = 0
    for char in text:
        if stack and char == stack[-1]:
            stack.pop()
            if deepest - len(stack) >= 3:
                return Verdict(True, deepest)
        elif char in "\"'":
            stack.append(char)
            deepest = max(deepest, len(stack))
    return Verdict(False, deepest)


@instruction("format:options", IFBENCH)
def one_of_options(text: str, options: Text) -> Verdict:
    """OptionsResponseChecker: the response is one of ``options``, split on "/", else on the letters
    "or" (anywhere, as in "f-or-ward"), else on ",". Letter options ("a), b), c)") must match
    exactly; others after stripping ASCII punctuation and spaces, any case."""
    separator = "/" if "/" in options else "or" if "or" in options else ","
    choices = [option.strip() for option in options.split(separator)]
    if re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", options):
        return Verdict(text in choices, choices)
    answer = text.strip(_STRIP).lower()
    return Verdict(any(option.strip(_STRIP).lower() == answer for option in choices), choices)


@instruction("format:line_indent", IFBENCH)
def indent_stairs(text: str) -> Verdict:
    """IndentStairsChecker: each line is indented by more leading spaces (tabs do not count) than the
    one before. Blank lines are dropped by removing them from the list while iterating over it, as
    IFBench's code does: a blank line right after a removed one stays, and fails the stairs."""
    lines = text.split("\n")
    for line in lines:
        if not line.strip():
            lines.remove(line)  # noqa: B909 (IFBench's reading, on purpose)
    indents = [len(line) - len(line.lstrip(" ")) for line in lines]
    for index in range(len(indents) - 1):
        if indents[index + 1] <= indents[index]:
            return Verdict(False, indents[: index + 2])
    return Verdict(True, indents)


@instruction("format:quote_unquote", IFBENCH)
def quote_then_explanation(text: str) -> Verdict:
    """QuoteExplanationChecker: with curly double quotes made straight, '"' in single quotes and all
    whitespace removed, no two double quotes touch and the text does not end with one (trailing
    digits and other punctuation aside). Nothing left after that makes IFBench's checker raise: not
    followed."""
    value = text.replace("\u201c", '"').replace("\u201d", '"').replace("'\"'", "")
    value = "".join(value.split())
    if '""' in value:
        return Verdict(False, "two quotes touch")
    tail = value.strip(string.digits + string.punctuation.replace('"', ""))
    if not tail:
        return Verdict(False, "nothing but digits and punctuation (IFBench's checker raises)")
    return Verdict(tail[-1] != '"', tail[-20:])


@instruction("format:list", IFBENCH)
def special_bullets(text: str, sep: Text) -> Verdict:
    """SpecialBulletPointsChecker: ``sep`` occurs at least twice (anywhere, not only at line starts)."""
    count = len(re.findall(re.escape(sep), text))
    return Verdict(count >= 2, count)


@instruction("format:thesis", IFBENCH)
def italic_thesis(text: str) -> Verdict:
    """ItalicsThesisChecker: from the first ``<i>`` (else ``<em>``), the first ``</i>`` (else
    ``</em>``) closes a non-blank span and non-blank text follows. IFBench cuts both tags as if they
    were three and four characters long, and so does this rule."""
    start = text.find("<i>")
    if start == -1:
        start = text.find("<em>")
        if start == -1:
            return Verdict(False, "no <i> or <em>")
    value = text[start:]
    end = value.find("</i>")
    if end == -1:
        end = value.find("</em>")
        if end == -1:
            return Verdict(False, "not closed")
    thesis, after = value[3:end], value[end + 4 :]
    return Verdict(thesis.strip() != "" and after.strip() != "", thesis[:40])


@instruction("format:sub-bullets", IFBENCH)
def sub_bullets(text: str) -> Verdict:
    """SubBulletPointsChecker: every piece after a ``*`` (any ``*``, bold markers too) holds a "-";
    a text without ``*`` passes."""
    pieces = text.split("*")[1:]
    lacking = sum(1 for piece in pieces if "-" not in piece)
    return Verdict(lacking == 0, {"pieces": len(pieces), "without -": lacking})


@instruction("format:no_bullets_bullets", IFBENCH)
def sentences_then_bullets(text: str) -> Verdict:
    """SomeBulletPointsChecker: lines of prose holding at least two regex sentences, then at least two
    lines starting with ``*`` and nothing else once the first has come. IFBench keeps "still in the
    prose" in the variable it then reuses for a line's sentences, so a blank line ends the prose too:
    any later line that is not a bullet fails."""
    sentences, bullets, in_prose = 0, 0, True
    for line in text.split("\n"):
        if line.strip().startswith("*"):
            in_prose = False
            if sentences < 2:
                return Verdict(False, {"sentences": sentences})
            bullets += 1
        elif in_prose:
            found = regex_sentences(line.strip())
            sentences += len(found)
            in_prose = bool(found)
        else:
            return Verdict(False, "a line that is not a bullet after the prose")
    return Verdict(bullets >= 2, {"sentences": sentences, "bullets": bullets})


@instruction("format:title_case", IFBENCH)
def title_case(text: str) -> Verdict:
    """TitleCaseChecker: no NLTK word token starts lower-case with a cased rest all lower- or all
    upper-case ("the", "iPHONE"); "iPhone", "a" and "42" pass."""
    for token in word_tokens(text):
        first, rest = token[0], token[1:]
        if first.isupper() and rest.islower():
            continue
        if first.islower() and (rest.isupper() or rest.islower()):
            return Verdict(False, token)
    return Verdict(True, None)


@instruction("format:output_template", IFBENCH)
def output_template(text: str) -> Verdict:
    """OutputTemplateChecker: "My Answer:", "My Conclusion:" and "Future Outlook:" all occur (case
    included), in any order."""
    missing = [label for label in ("My Answer:", "My Conclusion:", "Future Outlook:") if label not in text]
    return Verdict(not missing, missing)
