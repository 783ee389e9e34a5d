"""The verifiable instruction constraints that ``ifeval`` checks, one small model each.

Each constraint is a pydantic model (it arrives in a sample's ``reference``, so it is validated
like any input at the edge) with a ``type`` tag and a pure ``check(text) -> Verdict``. Counting
constraints share ``min`` / ``max`` / ``exact`` bounds. The families follow IFEval (Zhou et al.,
2023, arXiv 2311.07911) and its RL descendants; the counting rules are deliberately simple and
written down here, because a reward is only as good as the reader's ability to predict it:

- a *word* is a run of ``\\w`` characters; a *sentence* ends at ``.``, ``!`` or ``?`` followed by
  whitespace or the end (abbreviations such as "Dr." count as ends);
- a *paragraph* is a non-empty block between blank lines, or between ``separator`` strings;
- a *bullet* is a line starting with ``*``, ``-`` or ``+`` and a space;
- a *placeholder* is ``[text]``; a *highlight* is ``*text*`` or ``**text**`` on one line;
- a *section* starts at ``marker`` followed by a number ("SECTION 1").

Side by side with the IFEval instruction of the same intent (an instruction row gets IFEval's rule,
:mod:`.google`), where they read a response differently:

====================  ==========================================  ==============================================
intent                own constraint (``{"type": ...}``)           IFEval's instruction (Google's rule)
====================  ==========================================  ==============================================
keyword present       ``keywords``: whole words, literal text      ``keywords:existence``: a case-insensitive regex
                                                                  anywhere ("war" in "toward", "." any character)
keyword count         ``keyword_frequency``: whole words           ``keywords:frequency``: regex matches anywhere
forbidden word        ``keywords`` ``exclude``: whole words        ``keywords:forbidden_words``: ``\\bword\\b`` (same)
sentences             ends at ``.!?`` + space ("Dr." ends one)     NLTK Punkt ("Dr. Smith" is one sentence)
capital words         runs of ``\\w`` in capitals ("HELLO-WORLD"   NLTK tokens in capitals ("HELLO-WORLD" is one
                      is two)                                      token)
all capitals / lower  ``uppercase`` / ``lowercase``: case only      ``change_case:english_*``: and langdetect says
                                                                  English (an undetectable text passes)
postscript            a line starting with the marker              the marker anywhere in the text
bullets               ``*``/``-``/``+`` then a space or tab        a line ``*`` + not ``*``, or any line ``-...``
highlights            ``*x*`` or ``**x**`` once each, "* *" is one  ``*x*`` and ``**x**``; a blank one is none
quotation             straight or curly double quotes              straight double quotes only
paragraphs (``***``)  non-empty blocks between separators           an empty inner block fails the count
empty response        checked like any text                        follows no instruction (IFEval's framing)
====================  ==========================================  ==============================================
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

__all__ = ["CONSTRAINT_TYPES", "Constraint", "Verdict", "parse_constraint"]

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]++(?=\s|$)")  # starts at a run's first mark: linear
_BLANK_LINE = re.compile(r"\n\s*\n")
_BULLET = re.compile(r"^[ \t]*[*+-][ \t]", re.MULTILINE)  # [ \t], not \s: a blank-line run is not rescanned
_PLACEHOLDER = re.compile(r"\[[^\[\]\n]+\]")
_HIGHLIGHT = re.compile(r"\*\*[^\n*]+\*\*|\*[^\n*]+\*")
_TITLE = re.compile(r"<<[^\n<>\w]*+\w[^\n<>]*+>>")
_JSON_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    observed: Any  # what was measured: a count, the offending words, the first characters


class _Constraint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Count(_Constraint):
    """Bounds shared by every counting constraint: at least ``min``, at most ``max``, or ``exact``."""

    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)
    exact: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> _Count:
        if self.exact is not None and (self.min is not None or self.max is not None):
            raise ValueError("give 'exact' or 'min'/'max', not both")
        if self.exact is None and self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or 'exact'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("'min' is greater than 'max'")
        return self

    def bounded(self, count: int) -> Verdict:
        if self.exact is not None:
            return Verdict(count == self.exact, count)
        low_ok = self.min is None or count >= self.min
        return Verdict(low_ok and (self.max is None or count <= self.max), count)


class WordCount(_Count):
    type: Literal["word_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(len(_WORD.findall(text)))


class CharCount(_Count):
    type: Literal["char_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(len(text.strip()))


class SentenceCount(_Count):
    type: Literal["sentence_count"]

    def check(self, text: str) -> Verdict:
        pieces = _SENTENCE_END.split(text)
        return self.bounded(sum(1 for piece in pieces if _WORD.search(piece)))


class ParagraphCount(_Count):
    type: Literal["paragraph_count"]
    separator: str | None = Field(None, min_length=1)  # None: blank lines; IFEval uses "***"

    def check(self, text: str) -> Verdict:
        blocks = text.split(self.separator) if self.separator else _BLANK_LINE.split(text)
        return self.bounded(sum(1 for block in blocks if block.strip()))


class BulletCount(_Count):
    type: Literal["bullet_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(len(_BULLET.findall(text)))


class PlaceholderCount(_Count):
    type: Literal["placeholder_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(len(_PLACEHOLDER.findall(text)))


class HighlightCount(_Count):
    type: Literal["highlight_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(len(_HIGHLIGHT.findall(text)))


class SectionCount(_Count):
    type: Literal["section_count"]
    marker: str = Field("SECTION", min_length=1)

    def check(self, text: str) -> Verdict:
        return self.bounded(len(re.findall(rf"(?<!\w){re.escape(self.marker)}\s*\d+", text)))


class CapitalWordCount(_Count):
    type: Literal["capital_word_count"]

    def check(self, text: str) -> Verdict:
        return self.bounded(sum(1 for word in _WORD.findall(text) if word.isupper()))


class KeywordFrequency(_Count):
    type: Literal["keyword_frequency"]
    keyword: str = Field(min_length=1)
    case_sensitive: bool = False

    def check(self, text: str) -> Verdict:
        flags = 0 if self.case_sensitive else re.IGNORECASE
        return self.bounded(len(re.findall(rf"(?<!\w){re.escape(self.keyword)}(?!\w)", text, flags)))


class Keywords(_Constraint):
    """Every ``include`` keyword appears and no ``exclude`` keyword does (whole words)."""

    type: Literal["keywords"]
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    case_sensitive: bool = False

    def check(self, text: str) -> Verdict:
        flags = 0 if self.case_sensitive else re.IGNORECASE

        def present(word: str) -> bool:
            return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags) is not None

        missing = [w for w in self.include if not present(w)]
        forbidden = [w for w in self.exclude if present(w)]
        return Verdict(not missing and not forbidden, {"missing": missing, "forbidden": forbidden})


class JsonFormat(_Constraint):
    """The whole response is one JSON value (a surrounding ```json fence is allowed)."""

    type: Literal["json_format"]

    def check(self, text: str) -> Verdict:
        body = text.strip()
        fenced = _JSON_FENCE.match(body)
        try:
            json.loads(fenced.group(1) if fenced else body)
        except (ValueError, RecursionError) as exc:
            return Verdict(False, str(exc)[:100])
        return Verdict(True, "valid JSON")


class Lowercase(_Constraint):
    type: Literal["lowercase"]

    def check(self, text: str) -> Verdict:
        return Verdict(text.islower(), _first_offender(text, str.isupper))


class Uppercase(_Constraint):
    type: Literal["uppercase"]

    def check(self, text: str) -> Verdict:
        return Verdict(text.isupper(), _first_offender(text, str.islower))


class StartsWith(_Constraint):
    type: Literal["starts_with"]
    text: str = Field(min_length=1)
    case_sensitive: bool = False

    def check(self, text: str) -> Verdict:
        head = text.lstrip()[: len(self.text)]
        return Verdict(_same(head, self.text, self.case_sensitive), head)


class EndsWith(_Constraint):
    type: Literal["ends_with"]
    text: str = Field(min_length=1)
    case_sensitive: bool = False

    def check(self, text: str) -> Verdict:
        tail = text.rstrip()[-len(self.text) :]
        return Verdict(_same(tail, self.text, self.case_sensitive), tail)


class NoCommas(_Constraint):
    type: Literal["no_commas"]

    def check(self, text: str) -> Verdict:
        return Verdict("," not in text, text.count(","))


class Quotation(_Constraint):
    """The whole response is wrapped in double quotation marks (straight or curly)."""

    type: Literal["quotation"]

    def check(self, text: str) -> Verdict:
        body = text.strip()
        wrapped = len(body) >= 2 and (body[0], body[-1]) in {('"', '"'), ("\u201c", "\u201d")}
        return Verdict(wrapped, body[:1] + "…" + body[-1:])


class Title(_Constraint):
    """A title in double angular brackets, such as <<poem of joy>>."""

    type: Literal["title"]

    def check(self, text: str) -> Verdict:
        found = _TITLE.search(text)
        return Verdict(found is not None, found.group(0) if found else None)


class Postscript(_Constraint):
    """A postscript: a line starting with ``marker`` (P.S. by default, case-insensitive)."""

    type: Literal["postscript"]
    marker: str = Field("P.S.", min_length=1)

    def check(self, text: str) -> Verdict:
        found = re.search(rf"^[ \t]*{re.escape(self.marker)}", text, re.MULTILINE | re.IGNORECASE)
        return Verdict(found is not None, found is not None)


def _same(a: str, b: str, case_sensitive: bool) -> bool:
    return a == b if case_sensitive else a.casefold() == b.casefold()


def _first_offender(text: str, bad: Callable[[str], bool]) -> str | None:
    return next((ch for ch in text if bad(ch)), None)


_CLASSES = (
    WordCount, CharCount, SentenceCount, ParagraphCount, BulletCount, PlaceholderCount, HighlightCount,
    SectionCount, CapitalWordCount, KeywordFrequency, Keywords, JsonFormat, Lowercase, Uppercase,
    StartsWith, EndsWith, NoCommas, Quotation, Title, Postscript,
)  # fmt: skip
Constraint = Annotated[Union[_CLASSES], Field(discriminator="type")]  # noqa: UP007 (a runtime tuple)

_ADAPTER: TypeAdapter[Any] = TypeAdapter(Constraint)
CONSTRAINT_TYPES: frozenset[str] = frozenset(get_args(cls.model_fields["type"].annotation)[0] for cls in _CLASSES)


def parse_constraint(obj: Any) -> Any:
    """A constraint model from its JSON object; raises ``KeyError`` for an unknown type and
    ``pydantic.ValidationError`` for a malformed one."""
    if not isinstance(obj, dict) or obj.get("type") not in CONSTRAINT_TYPES:
        raise KeyError(obj.get("type") if isinstance(obj, dict) else None)
    return _ADAPTER.validate_python(obj)
