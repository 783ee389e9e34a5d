"""NeMo-Gym's multiple-choice readings: which letter a response answers, in each of its grading modes.

NeMo-Gym 0.7.0's ``mcqa`` server grades with a mode the task row (or the server's config) names,
and its ``gpqa_diamond`` server with a reading of its own; each mode decides what counts as an
answer, so a response that one mode pays another scores 0. rewardhub's ``choice`` verifier offers
them as its ``mode``, next to its own reading, so that a request naming a mode gets that mode's
semantics. The rules here are the released servers' (Apache-2.0), kept as pure functions:

- ``strict_single_letter_boxed``: the last ``\\boxed{...}`` (braces counted) holding only a letter
  with punctuation around it (``[B]``, ``(B)``, ``\\text{B}``) or a letter then ``:)..-`` and text;
- ``lenient_boxed``: that, else the one option whose text the last box contains;
- ``lenient_answer_colon``: the first ``answer:`` line's rest, a lone letter or an option's whole text;
- ``lenient_answer_colon_md``: the last ``Answer:`` payload (markdown emphasis allowed, or the row's
  ``answer_prefix``) that names one letter, else with a prefix the strict box;
- ``gpqa``: the last ``\\boxed{}`` (no nesting) as a capital letter, or its last standalone capital,
  else the last ``Answer: X``.

The whole text is read, a ``<think>`` block included, as the servers read ``output_text``. Not
ported: ``template_metadata.output_regex`` (a regular expression from the row, run on the response).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

__all__ = ["NEMO_GYM_MODES", "Options", "read_letter"]

NemoGymMode = Literal[
    "strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon", "lenient_answer_colon_md", "gpqa"
]
NEMO_GYM_MODES: tuple[str, ...] = NemoGymMode.__args__  # type: ignore[attr-defined]

Options = Sequence[dict[str, str | None]]
"""mcqa's options as the row gives them: ``[{"A": "text"}, {"B": "text"}, ...]``."""

_LETTER = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")
_BOXED_LETTER_ONLY = re.compile(r"^[^A-Za-z]*([A-Z])[^A-Za-z]*$")
_BOXED_LETTER_LABEL = re.compile(r"^\s*([A-Z])\s*[:).\-]")
_ANSWER_COLON = re.compile(r"(?i)answer\s*:\s*(.+)")
_ANSWER_PAYLOAD = re.compile(r"(?im)[*_]{0,2}Answer[*_]{0,2}\s*:[*_\s]{0,2}(.+)")
_TEXT_WRAP = re.compile(r"\\text\{\s*(.*?)\s*\}", re.S)
_LEADING_LETTER = re.compile(r"^([a-zA-Z])(?![a-zA-Z0-9])")
_LAST_STANDALONE = re.compile(r"\b[A-Z]\b(?!.*\b[A-Z]\b)", re.S)
_LIST_SEPARATOR = re.compile(r"(?:\s*[/|&,;]\s*|\s+(?:or|and)\s+|\s+)", re.I)
_GPQA_BOXED = re.compile(r"\\boxed\{([^}]*)\}", re.DOTALL)
_GPQA_CAPITAL = re.compile(r"\b([A-Z])\b", re.DOTALL)
_GPQA_ANSWER = re.compile(r"(?i)[\*\_]{0,2}Answer[\*\_]{0,2}\s*:[\s\*\_]{0,2}\s*([A-Z])(?![a-zA-Z0-9])")
_LOOKALIKES = str.maketrans(
    {"أ": " A", "ب": " B", "ج": " C", "د": " D", "অ": " A", "ব": " B", "ড": " C", "ঢ": " D"}
    | {"Ａ": " A", "Ｂ": " B", "Ｃ": " C", "Ｄ": " D"}
)


def read_letter(
    text: str, mode: str, letters: set[str], options: Options = (), answer_prefix: str | None = None
) -> str | None:
    """The letter ``text`` answers under ``mode`` (None: no answer), among ``letters``.

    ``gpqa`` with no ``letters`` accepts any capital, as gpqa_diamond does for a row without options.
    """
    text = text.strip()
    if not text:
        return None
    if mode == "gpqa":
        letter = _gpqa_letter(text)
        return None if letter is None or (letters and letter not in letters) else letter
    if mode == "strict_single_letter_boxed":
        return _strict_boxed(text, letters)
    if mode == "lenient_boxed":
        return _strict_boxed(text, letters) or _option_in_box(text, options, letters)
    if mode == "lenient_answer_colon":
        return _answer_colon(text, letters, options)
    if mode == "lenient_answer_colon_md":
        found = _from_payloads(text, letters, answer_prefix)
        return found if found is not None or not answer_prefix else _strict_boxed(text, letters)
    raise ValueError(f"unknown NeMo-Gym grading mode {mode!r}")


def last_boxed(text: str) -> str | None:
    """Everything inside the last ``\\boxed{...}``, braces counted (None when it is not closed)."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return None
    depth = 1
    for index in range(start + len("\\boxed{"), len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start + len("\\boxed{") : index]
    return None


def _unwrap(s: str) -> str:
    """``\\text{...}`` wrappers around the whole string removed, one after another."""
    while match := _TEXT_WRAP.fullmatch(s):
        s = match.group(1)
    return s


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _strict_boxed(text: str, letters: set[str]) -> str | None:
    inner = last_boxed(text)
    if inner is None:
        return None
    inner = _unwrap(inner.strip())
    match = _BOXED_LETTER_ONLY.match(inner) or _BOXED_LETTER_LABEL.match(inner)
    letter = match.group(1).upper() if match else None
    return letter if letter in letters else None


def _option_pairs(options: Options, letters: set[str]) -> list[tuple[str, str]]:
    return [
        (key.upper(), value)
        for entry in options or []
        for key, value in entry.items()
        if value is not None and isinstance(key, str) and len(key) == 1 and key.upper() in letters
    ]


def _option_in_box(text: str, options: Options, letters: set[str]) -> str | None:
    """The one option whose text the last box contains (none, or several: no answer)."""
    inner = last_boxed(text)
    if inner is None:
        return None
    inner = inner.strip()
    candidates = [_norm(inner), _norm(_unwrap(inner))]
    pairs = [(letter, _norm(option)) for letter, option in _option_pairs(options, letters)]
    matched = {letter for letter, option in pairs for c in candidates if option and option in c}
    return next(iter(matched)) if len(matched) == 1 else None


def _answer_colon(text: str, letters: set[str], options: Options) -> str | None:
    match = _ANSWER_COLON.search(text)
    if not match:
        return None
    candidate = _unwrap(match.group(1)).strip()
    if len(candidate) == 1 and candidate.isalpha() and candidate.upper() in letters:
        return candidate.upper()
    for entry in options or []:
        for key, value in entry.items():
            if value is not None and key.upper() in letters and _norm(value) == _norm(candidate):
                return key.upper()
    return None


def _payloads(text: str, answer_prefix: str | None) -> list[str]:
    text = unicodedata.normalize("NFKC", text)
    found = [(m.start(), m.group(1)) for m in _ANSWER_PAYLOAD.finditer(text)]
    if answer_prefix:
        prefix = re.compile(re.escape(unicodedata.normalize("NFKC", answer_prefix)) + r"\s*", re.IGNORECASE)
        for match in prefix.finditer(text):
            end = text.find("\n", match.end())
            found.append((match.start(), text[match.end() : end if end >= 0 else len(text)]))
    return [payload for _, payload in sorted(found, key=lambda item: item[0])]


def _from_payloads(text: str, letters: set[str], answer_prefix: str | None) -> str | None:
    for payload in reversed(_payloads(text, answer_prefix)):
        letter = _payload_letter(payload, letters)
        if letter is not None:
            return letter
    return None


def _listed(candidate: str, letters: set[str]) -> bool:
    """Whether distinct allowed letters stand as a list ("A or C", "B/D"): no single answer."""
    found = [(m.group(1).upper(), m.span(1)) for m in _LETTER.finditer(candidate) if m.group(1).upper() in letters]
    return any(
        left != right and _LIST_SEPARATOR.fullmatch(candidate[left_span[1] : right_span[0]]) is not None
        for (left, left_span), (right, right_span) in zip(found, found[1:], strict=False)
    )


def _payload_letter(payload: str, letters: set[str]) -> str | None:
    candidate = unicodedata.normalize("NFKC", payload).translate(_LOOKALIKES).strip().strip("*_` \t\n\r.,;:")
    if _listed(candidate, letters):
        return None
    if len(candidate) == 1:
        letter: str | None = candidate
    elif match := _LEADING_LETTER.match(candidate):
        letter = match.group(1)
    else:
        match = _LAST_STANDALONE.search(candidate)
        letter = match.group(0) if match else None
    return letter.upper() if letter and letter.upper() in letters else None


def _gpqa_letter(text: str) -> str | None:
    boxed = _GPQA_BOXED.findall(text)
    if boxed:
        inner = boxed[-1].strip()
        if len(inner) == 1 and inner.isupper():
            return inner
        capitals = _GPQA_CAPITAL.findall(inner)
        if capitals:
            return capitals[-1].strip().upper()
    answers = _GPQA_ANSWER.findall(text)
    return answers[-1].strip().upper() if answers else None
