"""The one reader of a response's final answer: ``math``, the group verifiers (``majority_vote``,
``pass_at_k``) and the model judge (``judge`` in verify mode) all call :func:`read_final_answer`.

A response commits to an answer through an *anchor*; of the anchors the policy allows, the one
that appears *last* in the response wins (a "Final answer: 10,455" written after an intermediate
``\\boxed{255}`` is the answer). The anchors (:data:`ANCHORS`):

- ``boxed``: the last ``\\boxed{...}`` / ``\\fbox{...}``. Several boxes count as one list answer
  when they stand in one math formula with the last (``$$\\boxed{(3, 3)} \\text{ for part (a) and }
  \\boxed{(1, 1)}$$``, as Math-Verify reads a formula) or when nothing but a list separator stands
  between them (``\\boxed{1}, \\boxed{2}``, ``\\boxed{a} \\quad\\text{and}\\quad \\boxed{b}``), never
  when prose outside a formula does (``\\boxed{10} and then \\boxed{42}`` answers 42). A box of
  ``\\phantom`` or spacing only is no answer. A last box left unclosed means the response was cut
  off: no answer.
- ``hashes``: the last ``#### ...`` line (GSM8K style).
- ``answer_tag``: the last closed ``<answer>...</answer>``; its content is read again by these
  rules (a box or an answer phrase inside it), else taken as a bare answer. An ``<answer>`` opened
  after it and never closed means the response was cut off: no answer.
- ``answer_phrase``: the last "final answer", "the answer", "Answer:" (and a few other languages),
  or a last line ``A: 18``; the answer is the first math that directly follows a copula ("is",
  "=", ":") in that sentence, skipping anything negated ("The answer is not 42, it is 41."
  answers 41), together with any items listed right after it ("$12$ and $13$"). With ``words``,
  a phrase followed by a copula and no math at all answers with the words up to the end of the
  sentence ("The answer is Paris." answers Paris): for answers that are not math.

Without any anchor, and only when the policy allows it (``unanchored``), a response that *is* a
bare answer (``-1 + sqrt(3)``, ``C. x = 42``) is the answer, else the last number or formula of
the last sentence that states one ("... so she has 79 g left." answers 79). A number glued to a
variable (``3x``) or offered as an alternative ("... or 0") is no answer.

What this module does not do: decide what the answer means (``math``'s ``normalize`` and
``compare`` do). It never reads code: a sentence that looks like a program (``__import__('os') or
0``) yields no answer, so garbage that merely ends in the gold earns nothing. It imports nothing
but the standard library: the judge reads answers without loading sympy.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "ANCHORS",
    "BoxedPart",
    "FinalAnswer",
    "boxed_parts",
    "extract_gold",
    "find_boxed",
    "prepare",
    "read_final_answer",
]

ANCHORS = ("boxed", "hashes", "answer_tag", "answer_phrase")
_TAIL = 20_000  # characters searched for an unanchored final statement
_SENTENCE_CAP = 3_000  # longest stretch read as one sentence
_WORDS_CAP = 200  # longest answer in words

_END_TOKENS = ("<|im_end|>", "<|im_start|>", "<|endoftext|>", "<|eot_id|>", "<｜end▁of▁sentence｜>", "</s>")
_BOX_OPEN = re.compile(r"\\+(?:[a-z]*boxed|fbox|framebox)\s*(?=\{)|\\+boxed\s+(?=[^\s{])")
_DOUBLE_BACKSLASH = re.compile(r"\\\\(?=[a-zA-Z])")
_BRACE = re.compile(r"(?<!\\)[{}]")
_OPENER = re.compile(r"(?<!\\)\$\$|(?<!\\)\$|\\\(|\\\[")
_CLOSERS = {
    "$$": re.compile(r"(?<!\\)\$\$"),
    "$": re.compile(r"(?<!\\)\$"),
    "\\(": re.compile(r"\\\)"),
    "\\[": re.compile(r"\\\]"),
}
_PHRASE = re.compile(
    r"(?:(?<![A-Za-z])(?:final\s+answer|the\s+answer|answer|réponse|respuesta|resposta|antwort|risposta|ответ)"
    r"(?![A-Za-z])|答案)",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"(?:\bnot|n't|\bnever|\binstead of|\brather than)\s*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？।]|\n")
_HASHES = re.compile(r"####\s*([^\n]*[\d\\][^\n]*)")  # "#### 18"; a stray "####" states nothing
_HASHES_WORDS = re.compile(r"####[ \t]*([^\n]*\S)")
# the body may not contain another opener: many unclosed tags would otherwise rescan the text
_ANSWER_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL | re.IGNORECASE)
_TAG_MARKUP = re.compile(r"<\s*/?\s*answer\s*>", re.IGNORECASE)
_TAG_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_CURRENCY_AFTER = re.compile(r"\d\s*(?<!\\)\$(?=\s|$)")  # "2,74 $": a lone dollar after an amount
_INVISIBLE = re.compile(r"\\[hv]?phantom\s*\{[^{}]*\}|\\[hv]space\*?\s*\{[^{}]*\}")  # typesetting, not an answer
_NEGATED_WORDS = re.compile(r"(?:not|never|unknown|unclear)\b", re.IGNORECASE)
_CODE = re.compile(
    r"__\w+__|\blambda\b|\bimport\b|\w\(\s*\)|\w\(\s*['\"]|\)\(\s*\)|\bdef\b|\bexec\b|\beval\b|\bgetattr\b|\bglobals\b"
)
_ATOM = (
    r"(?:\d+ \d+/\d+(?![\d/])|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?|\.\d+"
    r"|\\[dt]?frac\{[^{}]*\}\{[^{}]*\}|\\sqrt\{[^{}]*\}|\\sqrt\d|\\pi)"
)
_BARE_ITEM = re.compile(
    r"(?<![A-Za-z0-9_\\])[-−]?\(?\s*" + _ATOM + r"(?:\s*[-+*/×÷^=]\s*[-−]?\(?\s*" + _ATOM + r"\)?)*\)?"
    r"(?:\s*(?:\\?%|percent(?:age)?\b|pct\b|°|\^\\circ|\^\{\\circ\}|degrees?\b))?"
)
_OTHER_SCRIPT = re.compile(r"[^\W\d_A-Za-zα-ωΑ-Ωπ]")  # letters of other scripts: prose, not a bare answer
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])")
_MATH_WORDS = frozenset(
    "sqrt pi sin cos tan cot sec csc log ln exp infty inf frac cdot times and or text mathrm mbox pm mp le ge lt gt "
    "neq leq geq cup cap in mid left right dfrac tfrac boxed circ deg degree degrees oo".split()
)
_LATEX_NOISE = re.compile(
    r"\\(?:text\w*|math\w+|mbox|operatorname)\s*\{[^{}]*\}|\\(?:begin|end)\s*\{[^{}]*\}(?:\{[^{}]*\})?"
)
_AFTER_COPULA = re.compile(
    r"(?:(?<![A-Za-z])(?:is|are|was|were|be|equals?|est|es|ist|sont|é|è)|=|:|：|为|是|等于)[\s*\"'“”]*$", re.IGNORECASE
)
_A_LINE = re.compile(r"(?:^|\n)[ \t]*A[ \t]*:(?=[^\n]*\s*$)")
_HEDGE = re.compile(r"(?<![\w,])\s*\bor\s*$", re.IGNORECASE)
_CHOICE_AFTER = re.compile(r"[\s:：*(]*\(?([A-E])\)?(?=[\s.,;:)*]|$)")
_LIST_GAP = re.compile(r"^[\s\"'*]*(?:,|;|and|or|, and|&)[\s\"'*]*$", re.IGNORECASE)
_SEPARATOR_NOISE = re.compile(r"\$|\\[()\[\]]|\\q?quad(?![A-Za-z])|\\[,;: !]|~|\\text\s*\{\s*\}")
_BOX_SEPARATOR = re.compile(
    r"^(?:[A-Za-z]+\s+)?(?:,|;|and|or|,\s*and|\\text\s*\{\s*(?:,\s*)?(?:and|or)\s*\})?\s*"
    r"(?:[A-Za-z](?:_\{?\w+\}?)?\s*=)?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FinalAnswer:
    """The final answer as written in the text, and the anchor that found it."""

    text: str
    anchor: str


def prepare(response: str, strip_think: bool = True) -> str:
    """The part of a response that may hold its answer: before any end-of-turn token, after the
    last ``</think>`` (unless ``strip_think`` is False: the whole text, reasoning included), with
    doubled backslashes (``\\\\frac``) undone and invisible typesetting (``\\phantom{42}``,
    ``\\hspace{1cm}``) dropped."""
    for token in _END_TOKENS:
        cut = response.find(token)
        if cut >= 0:
            response = response[:cut]
    if strip_think and "</think>" in response:
        response = response.rsplit("</think>", 1)[1]
    if "matrix" not in response and "\\\\" in response:
        response = _DOUBLE_BACKSLASH.sub(r"\\", response)
    if "phantom" in response or "space" in response:
        response = _INVISIBLE.sub(" ", response)  # typeset invisibly: never part of an answer
    return response


def read_final_answer(
    response: str,
    anchors: tuple[str, ...] = ANCHORS,
    unanchored: bool = True,
    bare_numbers: bool = True,
    words: bool = False,
    strip_think: bool = True,
) -> list[FinalAnswer]:
    """The response's final answer under the policy: candidates, best first (a caller that parses
    takes the first one that parses); empty when the response commits to no answer.

    ``anchors`` are the anchors allowed (see the module docstring); ``unanchored`` says whether a
    response with none of them can answer at all; ``bare_numbers`` whether math written outside
    LaTeX delimiters ("so it costs 7.78") can be an answer; ``words`` whether an answer phrase may
    answer in words ("The answer is Paris."); ``strip_think`` whether a leading reasoning block is
    left out (see :func:`prepare`).
    """
    return _read(prepare(response, strip_think), tuple(anchors), unanchored, bare_numbers, words)


def _read(text: str, anchors: tuple[str, ...], unanchored: bool, bare_numbers: bool, words: bool) -> list[FinalAnswer]:
    found: list[tuple[int, list[FinalAnswer]]] = []
    if "answer_tag" in anchors:
        tag = _last_tag(text)
        opener = _TAG_OPEN.search(text, tag.end() if tag else 0)
        if opener is not None and (tag is None or opener.start() >= tag.end()):
            return []  # cut off inside its answer tag
        if tag is not None:
            inside = tuple(anchor for anchor in anchors if anchor != "answer_tag")
            read = _read(tag.group(1), inside, True, bare_numbers, words)
            content = tag.group(1).strip()
            if not read and words and content and len(content) <= _WORDS_CAP and "\n" not in content:
                read = [FinalAnswer(content, "answer_tag")]
            found.append((tag.end(), [FinalAnswer(c.text, "answer_tag") for c in read]))
        text = _TAG_MARKUP.sub(lambda markup: " " * len(markup.group()), text)  # markup, never an answer phrase
    if "boxed" in anchors:
        boxed = _last_boxed(text)
        if boxed is not None:
            content, end = boxed
            if not content:
                return []  # cut off inside its final box
            found.append((end, [FinalAnswer(content, "boxed")]))
    if "hashes" in anchors:
        hashes = list((_HASHES_WORDS if words else _HASHES).finditer(text))
        if hashes and hashes[-1].group(1).strip():
            found.append((hashes[-1].start(), [FinalAnswer(hashes[-1].group(1).strip(), "hashes")]))
    if "answer_phrase" in anchors:
        after = max((position for position, _ in found), default=0)  # an earlier phrase cannot win
        for phrased in (_after_last_phrase(text, bare_numbers, after, words), _final_a_line(text, bare_numbers)):
            if phrased is not None:
                found.append((phrased[1], [FinalAnswer(phrased[0], "answer_phrase")]))
    if found:
        return max(found, key=lambda pair: pair[0])[1]
    if not unanchored:
        return []
    candidates = []
    stripped = text.strip()
    if stripped and _is_bare_answer(stripped, bare_numbers):
        candidates.append(FinalAnswer(stripped, "whole"))
    last = _last_stated(text, bare_numbers)
    if last is not None and last != stripped:
        candidates.append(FinalAnswer(last, "final_line"))
    return candidates


def _last_tag(text: str) -> re.Match[str] | None:
    last = None
    for last in _ANSWER_TAG.finditer(text):  # noqa: B007 - the last one is the answer
        pass
    return last


def extract_gold(gold: str) -> FinalAnswer:
    """The gold answer: its last box (with the same list rule) if boxed, the answer a worked
    solution states if it is one, else the whole string."""
    text = prepare(gold).strip()
    boxed = _last_boxed(text, allow_unclosed=True)
    if boxed is not None and boxed[0]:
        return FinalAnswer(boxed[0], "boxed")
    if len(text) > 120 and len(_prose_words(_without_spans(text))) > 12:
        phrased = _after_last_phrase(text, bare_numbers=True)
        if phrased is not None:
            return FinalAnswer(phrased[0], "answer_phrase")
        last = _last_stated(text, bare_numbers=True)
        if last is not None:
            return FinalAnswer(last, "final_line")
    return FinalAnswer(text, "whole")


def find_boxed(text: str, allow_unclosed: bool = False) -> str | None:
    """The content of the last box (joined with the boxes listed right before it), ``""`` for an
    unclosed last box, or None when there is no box at all."""
    found = _last_boxed(text, allow_unclosed)
    return None if found is None else found[0]


def _last_boxed(text: str, allow_unclosed: bool = False) -> tuple[str, int] | None:
    """The last box's content (joined with the boxes of its formula and those listed right before
    it) and where it ends."""
    grouped = _box_groups(text, allow_unclosed)
    if grouped is None:
        return None
    groups, end = grouped
    return groups[-1].text, end


@dataclass(frozen=True)
class BoxedPart:
    """One boxed answer of a text (boxes a list joins are one) and the text between it and the
    previous one (``""`` for the first): the prose that says whether it answers another part
    ("(b)") or takes the previous one back ("Wait, no:")."""

    text: str
    before: str


def boxed_parts(text: str, allow_unclosed: bool = False, strip_think: bool = True) -> list[BoxedPart]:
    """Every boxed answer of ``text`` (read as :func:`prepare` leaves it), left to right: boxes a list
    joins (a list separator or one formula between them) are one part, as :func:`find_boxed` joins
    them; boxes that prose separates are separate parts (``(a) \\boxed{3} ... (b) \\boxed{5}`` has two).
    Empty when nothing is boxed or the last box is left unclosed."""
    grouped = _box_groups(prepare(text, strip_think), allow_unclosed)
    if grouped is None or not grouped[0][-1].text:
        return []
    return grouped[0]


def _box_groups(text: str, allow_unclosed: bool = False) -> tuple[list[BoxedPart], int] | None:
    """The contents of the outermost boxes grouped into answers (see :func:`boxed_parts`) and where
    the last box ends; the last group is ``""`` when the last box is unclosed (the response was cut
    off), unless ``allow_unclosed`` (a gold) takes the rest of the text as its content."""
    opens = list(_BOX_OPEN.finditer(text))
    if not opens:
        return None
    closing = _matching_braces(text)
    boxes: list[tuple[int, int, str]] = []  # (start, end, content), left to right, outermost only
    for match in opens:
        if boxes and match.start() < boxes[-1][1]:
            continue  # a box inside the previous box: the outer one is the answer
        brace = match.end()
        if brace < len(text) and text[brace] == "{":
            end = closing.get(brace)
            if end is None:
                if match is not opens[-1]:
                    continue
                if not allow_unclosed:
                    return [BoxedPart("", "")], match.start()
                boxes.append((match.start(), len(text), text[brace + 1 :].strip()))
                break
            boxes.append((match.start(), end + 1, text[brace + 1 : end].strip()))
        else:  # "\boxed 5": one token
            token = re.match(r"\S+", text[brace:])
            if token:
                boxes.append((match.start(), brace + token.end(), token.group(0).rstrip(".,;$")))
    if not boxes:
        return None
    runs: list[list[tuple[int, int, str]]] = [[boxes[0]]]
    for previous, box in zip(boxes, boxes[1:], strict=False):
        formula = _enclosing_span(text, box[0], box[1])
        in_formula = formula is not None and previous[0] >= formula.start
        if in_formula or _is_list_separator(text[previous[1] : box[0]]):
            runs[-1].append(box)
        else:
            runs.append([box])
    groups = []
    for k, run in enumerate(runs):
        contents: list[str] = []
        for _, _, content in run:
            if content and (not contents or contents[-1] != content):
                contents.append(content)
        before = text[runs[k - 1][-1][1] : run[0][0]] if k else ""
        groups.append(BoxedPart(", ".join(contents), before))
    return groups, boxes[-1][1]


def _enclosing_span(text: str, start: int, end: int) -> _Span | None:
    """The math span (``$...$``, ``$$...$$``, ``\\[...\\]``) that holds ``text[start:end]``, if any."""
    spans = _spans(text)
    k = bisect.bisect_right([span.start for span in spans], start) - 1
    return spans[k] if k >= 0 and spans[k].end >= end else None


def _is_list_separator(between: str) -> bool:
    if between == "":
        return True
    cleaned = _SEPARATOR_NOISE.sub(" ", between).strip()
    return bool(cleaned) and bool(_BOX_SEPARATOR.match(cleaned))


def _matching_braces(text: str) -> dict[int, int]:
    """Index of each ``{`` mapped to its matching ``}`` (escaped braces ``\\{`` count as text)."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for brace in _BRACE.finditer(text):
        if brace.group() == "{":
            stack.append(brace.start())
        elif stack:
            pairs[stack.pop()] = brace.start()
    return pairs


# -- sentences and the math they state -------------------------------------------------------------


@dataclass(frozen=True)
class _Span:
    """A math span: ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]`` (inline ones on one line)."""

    start: int
    end: int
    content: str
    display: bool


@lru_cache(maxsize=32)
def _spans(text: str) -> tuple[_Span, ...]:
    """All math spans of ``text``, left to right, in linear time (a regex with lazy ``.+?`` would be
    quadratic on a 100k-character response full of unmatched ``$$``)."""
    closers = {kind: [m.start() for m in pattern.finditer(text)] for kind, pattern in _CLOSERS.items()}
    newlines = [m.start() for m in re.finditer("\n", text)]
    spans: list[_Span] = []
    position = 0
    for opener in _OPENER.finditer(text):
        if opener.start() < position:
            continue
        kind = opener.group(0)
        positions = closers[kind]
        k = bisect.bisect_left(positions, opener.end())
        if k == len(positions):
            continue
        close = positions[k]
        inline = kind in ("$", "\\(")
        line_end = (
            newlines[bisect.bisect_left(newlines, opener.end())]
            if inline and newlines and newlines[-1] >= opener.end()
            else len(text)
        )
        content = text[opener.end() : close]
        if (inline and close > line_end) or not content.strip():
            continue
        end = close + (2 if kind != "$" else 1)
        spans.append(_Span(opener.start(), end, content.strip(), not inline))
        position = end
    return tuple(spans)


def _spans_in(text: str, start: int, end: int) -> list[_Span]:
    spans = _spans(text)
    first = bisect.bisect_left([s.start for s in spans], start)
    return [s for s in spans[first:] if s.end <= end] if spans else []


def _without_spans(text: str) -> str:
    out, position = [], 0
    for span in _spans(text):
        out.append(text[position : span.start])
        position = span.end
    out.append(text[position:])
    return " ".join(out)


@dataclass(frozen=True)
class _Item:
    text: str
    start: int
    end: int
    glued: bool = False  # a number glued to a variable ("3x"): not a number, not an answer


def _items(text: str, start: int, end: int, bare_numbers: bool) -> list[_Item]:
    """Math spans (and, if allowed, bare numeric expressions) in ``text[start:end]``."""
    found: list[_Item] = []
    cursor = start
    for span in _spans_in(text, start, end):
        if _looks_like_prose(span.content):
            continue  # "$10 for her fudge ... $": currency signs, not math
        if bare_numbers:
            found.extend(_bare_items(text, cursor, span.start))
        found.append(_Item(span.content, span.start, span.end))
        cursor = span.end
    if bare_numbers:
        found.extend(_bare_items(text, cursor, end))
    return found


def _bare_items(text: str, start: int, end: int) -> list[_Item]:
    items = []
    for match in _BARE_ITEM.finditer(text, start, end):
        value = match.group(0).strip()
        if not any(char.isdigit() for char in value) and "\\" not in value:
            continue
        glued = bool(re.match(r"[A-Za-z](?![A-Za-z²³])", text[match.end() : match.end() + 2]))
        items.append(_Item(_last_of_chain(value), match.start(), match.end(), glued))
    return items


def _last_of_chain(value: str) -> str:
    """``35 + 70 = 105`` states 105: the last member of a chain of equalities."""
    if "=" in value:
        value = value.rsplit("=", 1)[1]
    value = value.strip()
    while value.endswith(")") and value.count(")") > value.count("("):
        value = value[:-1].rstrip()
    while value.startswith("(") and value.count("(") > value.count(")"):
        value = value[1:].lstrip()
    if value.startswith("(") and value.endswith(")") and "," not in value and _wraps(value):
        value = value[1:-1].strip()  # "(\frac{2}{5})" in prose: grouping, not a tuple
    return value


def _wraps(value: str) -> bool:
    """The first parenthesis closes at the very end."""
    depth = 0
    for i, char in enumerate(value):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return i == len(value) - 1
    return False


def _prose_words(text: str) -> list[str]:
    """Words of prose in ``text``: not LaTeX commands, environments or ``\\text{}``, not math
    function names, not labels right before ``:`` or ``=``."""
    text = _LATEX_NOISE.sub(" ", text)
    return [
        m.group(0)
        for m in _PROSE_WORD.finditer(text)
        if m.group(0).lower() not in _MATH_WORDS and not re.match(r"\s*[:=]", text[m.end() :])
    ]


def _looks_like_prose(span: str) -> bool:
    return len(_prose_words(span)) >= 2


def _boundaries(text: str, start: int, end: int) -> list[int]:
    """Positions in ``text[start:end]`` where a sentence ends (math spans are opaque, but a
    display formula that ends with a full stop ends its sentence)."""
    stops: list[int] = []
    position = start
    for span in _spans_in(text, start, end):
        stops.extend(stop.end() for stop in _SENTENCE_END.finditer(text, position, span.start))
        if span.display and span.content.endswith("."):
            stops.append(span.end)
        position = span.end
    stops.extend(stop.end() for stop in _SENTENCE_END.finditer(text, position, end))
    return stops


def _pick(text: str, items: list[_Item], start: int, prefer_last: bool) -> tuple[str, int] | None:
    """The stated answer among a sentence's items: after an answer phrase, the first item that
    directly follows a copula ("is 34" in "The largest $n$ is 34"), else the first item; in an
    unanchored sentence, the last item. Negated items never count."""
    kept = [item for item in items if not _NEGATION.search(text[max(start, item.start - 20) : item.start])]
    if not kept:
        return None
    if prefer_last:
        chosen = kept[-1]
    else:
        ends = [start, *(item.end for item in items)]
        stated = [
            item for item in kept if _AFTER_COPULA.search(text[max(e for e in ends if e <= item.start) : item.start])
        ]
        chosen = stated[0] if stated else kept[0]
    if chosen.glued or _HEDGE.search(text[max(start, chosen.start - 6) : chosen.start]):
        return None  # "3x" is no number; "... or 0" offers an alternative, not an answer
    # "$12$ and $13$", "2, 3 and 5": items joined only by list separators form one list answer
    listed = [chosen]
    for item in kept[kept.index(chosen) + 1 :]:
        if not _LIST_GAP.match(text[listed[-1].end : item.start]) or item.glued:
            break
        listed.append(item)
    for item in reversed(kept[: kept.index(chosen)]) if prefer_last else ():
        if not _LIST_GAP.match(text[item.end : listed[0].start]) or item.glued:
            break
        listed.insert(0, item)
    return ", ".join(item.text for item in listed), chosen.start


def _after_last_phrase(text: str, bare_numbers: bool, after: int = 0, words: bool = False) -> tuple[str, int] | None:
    for phrase in list(_PHRASE.finditer(text, after))[-20:][::-1]:
        start = phrase.end()
        stops = [stop for stop in _boundaries(text, start, min(len(text), start + 3000)) if stop > start]
        end = stops[0] if stops else len(text)
        items = _items(text, start, end, bare_numbers)
        if not items and not text[start:end].strip(" :：*\n"):
            end = stops[1] if len(stops) > 1 else min(len(text), start + 3000)  # "Final Answer:\n$$5$$"
            items = _items(text, start, end, bare_numbers)
        letter = _CHOICE_AFTER.match(text, _after_copula(text, start, end), end)
        if letter and not items:
            return f"({letter.group(1)})", letter.start(1)  # "The answer is (B)."
        said = _stated_words(text, start, end, items) if words else None
        if said is not None:
            return said
        if items:
            if _CODE.search(text[start:end]):
                return None
            return _pick(text, items, start, prefer_last=False)
    return None


_WORDS_COPULA = re.compile(r"\s*(?:(?:is|was|would be|should be|will be)(?![A-Za-z])\s*[:：]?|[:：=])", re.IGNORECASE)
_WORDS_LEAD = re.compile(r"[\s*\"'“”]*")


def _stated_words(text: str, start: int, end: int, items: list[_Item]) -> tuple[str, int] | None:
    """The words a copula right after the phrase states ("The answer is Paris."), when no math
    comes first (then the math is the answer). Negated or hedged words ("not clear") are none."""
    copula = _WORDS_COPULA.match(text, start, end)
    if copula is None:
        return None
    lead = _WORDS_LEAD.match(text, copula.end(), end)
    begin = lead.end() if lead else copula.end()
    if items and items[0].start <= begin:
        return None
    said = text[begin:end].strip().rstrip(".!?。").strip(" *\"'“”")
    if not said or len(said) > _WORDS_CAP or _CODE.search(said) or _NEGATED_WORDS.match(said):
        return None
    return said, begin


def _final_a_line(text: str, bare_numbers: bool) -> tuple[str, int] | None:
    """The few-shot QA format: a response whose last line is ``A: 18``."""
    last = _A_LINE.search(text)
    if last is None:
        return None
    items = _items(text, last.end(), len(text.rstrip()), bare_numbers)
    return _pick(text, items, last.end(), prefer_last=False) if items else None


def _after_copula(text: str, start: int, end: int) -> int:
    """Where a phrase's answer begins: after "is", ":" or "=" if one follows directly."""
    copula = re.match(r"\s*(?:is|:|：|=|would be|should be)?", text[start:end], re.IGNORECASE)
    return start + (copula.end() if copula else 0)


def _last_stated(text: str, bare_numbers: bool) -> str | None:
    """The answer the last sentence stating any math gives (skipping up to two closing remarks
    such as "I hope it is correct.")."""
    end = len(text.rstrip())
    tail = max(0, end - _TAIL)  # a final statement lives near the end; bound the work on huge inputs
    starts = [tail, *(stop for stop in _boundaries(text, tail, end) if stop < end)]
    skipped = 0
    while starts and skipped < 3:
        start = starts.pop()
        if not text[start:end].strip():
            end = start
            continue
        start = max(start, end - _SENTENCE_CAP)
        items = _items(text, start, end, bare_numbers)
        if items:
            if _CODE.search(text[start:end]):
                return None
            picked = _pick(text, items, start, prefer_last=True)
            return None if picked is None else picked[0]
        skipped += 1
        end = start
    return None


def _is_bare_answer(text: str, bare_numbers: bool) -> bool:
    """A response that is nothing but an answer: short, one line, at most one prose word, no
    currency sign written after an amount ("Soucis : 2,74 $ a..": prose that states an amount)."""
    if len(text) > 200 or "\n" in text or _CODE.search(text) or _OTHER_SCRIPT.search(text):
        return False
    if len(re.findall(r"(?<!\\)\$", text)) % 2 and _CURRENCY_AFTER.search(text):
        return False
    if not re.search(r"[0-9A-Za-z\\]", text):
        return False
    spans = _spans(text)
    if not bare_numbers and not (len(spans) == 1 and spans[0].start == 0 and spans[0].end == len(text)):
        return False
    return len(_prose_words(text)) <= 1
