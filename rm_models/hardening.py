"""Defences of the judges against responses written to fool them.

LLM judges are fooled by almost nothing: an empty answer, a lone ":" or a reasoning opener such
as "Solution" or "Let's solve this problem step by step." (the "master keys" of Zhao et al.,
arXiv 2507.08794) get judged correct at alarming rates. So:

- :func:`is_master_key`: such a response scores 0 without the judge ever seeing it;
- :func:`extract_final_answer`: in verification mode only the final answer goes to the judge,
  never the reasoning that could argue with it. It is read by the one reader every verifier shares
  (:func:`rewardhub.verifiers.final_answer.read_final_answer`), so the judge that ``math``
  escalates to reads the answer ``math`` read;
- :func:`fill_template`: untrusted text is inserted in one pass (a response containing
  ``{{GROUND_TRUTH_ANSWER}}`` stays literal) with the template's own tags escaped inside it, so a
  response cannot close ``<model_answer>`` and write instructions after it.

What this does not cover: a response that argues persuasively in plain words in grading mode,
where the whole response has to be read. Keep a rule verifier as the first line where one exists.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Mapping

from rewardhub.verifiers.final_answer import read_final_answer

__all__ = [
    "REASONING_OPENERS",
    "escape_tags",
    "extract_final_answer",
    "fill_template",
    "is_master_key",
]

REASONING_OPENERS = frozenset(
    {
        "solution",
        "thought process",
        "let's solve this problem step by step",
        "let's solve this step by step",
        "let's think step by step",
        "let me think step by step",
        "let me solve this step by step",
        "let's work through this step by step",
        "step by step",
        "step 1",
        "reasoning",
        "answer",
        "final answer",
        "the answer is",
        "explanation",
        "analysis",
        "thinking",
        "解",
        "解答",
        "解析",
        "思路",
        "かいせつ",
        "解説",
        "respuesta",
        "solución",
    }
)
"""Normalised (lower case, no surrounding punctuation) responses that say nothing."""

_PUNCTUATION = set(string.punctuation) | {"…", "。", "，", "：", "、", "·", "“", "”", "‘", "’"}


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("’", "'").lower()
    text = " ".join(text.split())
    return text.strip("".join(_PUNCTUATION - {"'"}) + " ")


def is_master_key(response: str) -> bool:
    """True for a response with no content: empty, only punctuation or symbols, or a lone opener."""
    if not any(ch.isalnum() for ch in response):
        return True
    return _normalise(response) in REASONING_OPENERS


def extract_final_answer(response: str, how: str = "boxed_or_marked") -> str | None:
    """The response's final answer, or None when it commits to none.

    ``boxed_or_marked``: what :func:`~rewardhub.verifiers.final_answer.read_final_answer` reads
    with ``math``'s defaults (the last of a box, ``####``, ``<answer>`` tags and "the answer is" /
    "Answer:", else a bare answer or the last stated number), answers in words allowed ("The
    answer is Paris."); ``last_line``: the last non-empty line.
    """
    if how == "last_line":
        lines = [line.strip() for line in response.splitlines() if line.strip()]
        return lines[-1] if lines else None
    candidates = read_final_answer(response, words=True)
    return candidates[0].text if candidates else None


def escape_tags(text: str, tags: Iterable[str]) -> str:
    """Make ``<tag>`` / ``</tag>`` (any case, any spacing) of the template inert inside ``text``."""
    names = "|".join(re.escape(tag) for tag in tags)
    pattern = re.compile(rf"<\s*/?\s*(?:{names})\b[^>]*>", re.IGNORECASE)
    return pattern.sub(lambda m: m.group().replace("<", "&lt;").replace(">", "&gt;"), text)


_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


def fill_template(template: str, values: Mapping[str, str], tags: Iterable[str]) -> str:
    """Replace every ``{{NAME}}`` of ``template`` in a single pass, escaping the template's tags
    inside the values; inserted text is never searched for placeholders again."""
    tags = tuple(tags)

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"template placeholder {{{{{name}}}}} has no value")
        return escape_tags(values[name], tags)

    return _PLACEHOLDER.sub(replace, template)
