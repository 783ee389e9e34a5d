"""Small text helpers shared by the rule verifiers."""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = ["normalize_text", "strip_think"]

_WHITESPACE = re.compile(r"\s+")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_THINK_BLOCK = re.compile(r"<think>(?:(?!<think>).)*?</think>", re.DOTALL)  # linear on unclosed tags


def normalize_text(text: str, *, case: bool = False, whitespace: bool = False, punctuation: bool = False) -> str:
    """Canonical form for string comparison; each flag says whether that difference *matters*."""
    text = unicodedata.normalize("NFKC", text)
    if not punctuation:
        text = text.translate(_PUNCTUATION)
    if not whitespace:
        text = _WHITESPACE.sub(" ", text).strip()
    if not case:
        text = text.casefold()
    return text


def strip_think(text: str) -> str:
    """The answer part of an R1-style response: everything after the last ``</think>``."""
    text = _THINK_BLOCK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    return text
