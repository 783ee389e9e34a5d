"""What a gold answer holds, read as a careful grader reads it: its parts, and the answer inside a sentence.

Golds come from datasets written for people, not parsers. Two shapes need reading before parsing:

- **several boxes**: ``(a) \\boxed{3} ... (b) \\boxed{5}`` is a two-part answer, not the answer
  ``5`` (its last box): every part must be answered, in order (:func:`answer_parts`). Boxes that a
  list joins (``\\boxed{2}, \\boxed{3}``, or two boxes in one formula) stay one answer, a list whose
  own notation says whether order matters. Boxes are not parts when the text boxes one answer again
  (a worked solution that restates its ``\\boxed{840}``: one answer) or takes a box back ("Wait,
  no", "let me check again": the last box is the answer, as in a response). A response answers a
  multi-part gold with its last boxes, one per part, read by the same rule.
- **a sentence in the box**: ``\\boxed{\\text{The final answer is (B) 1}}`` answers ``(B) 1``, the
  choice B whose option is 1 (:func:`answer_in_sentence`): its lead-in ("The final answer is",
  "Answer:") and a closing "I hope it is correct." are words about the answer, not the answer.
"""

from __future__ import annotations

import re

from ..final_answer import boxed_parts

__all__ = ["answer_in_sentence", "answer_parts"]

_LEAD_IN = re.compile(
    r"^(?:(?:so|thus|therefore|hence)\s*,?\s+)?(?:final\s+answer\s*:\s*)?"
    r"(?:the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is|:|=)\s*",
    re.IGNORECASE,
)
_HOPE = re.compile(r"[.\s]*I hope it is correct[.\s]*$", re.IGNORECASE)


def answer_parts(
    text: str, count: int | None = None, allow_unclosed: bool = False, strip_think: bool = True
) -> list[str]:
    """The parts of a multi-part answer boxed in ``text`` (see the module docstring), or ``[]`` when it
    boxes one answer; with ``count``, its last ``count`` parts (``[]`` when it boxes fewer)."""
    parts = boxed_parts(text, allow_unclosed, strip_think)
    if count is not None:
        parts = parts[-count:] if len(parts) >= count else []
    if any(_REVISION.search(part.before) for part in parts[1:]):
        return []
    texts = _one_period([part.text for part in parts])
    return texts if len(texts) > 1 else []


# Words that take a boxed answer back rather than answer another part.
_REVISION = re.compile(
    r"(?<![A-Za-z])(?:wait|no|not|actually|but|however|hmm+|oops|sorry|mistake|wrong|incorrect|instead|rather|"
    r"re-?check\w*|check\w*|again|re-?consider\w*|re-?evaluat\w*|correction|let me)(?![A-Za-z])",
    re.IGNORECASE,
)


def _one_period(texts: list[str]) -> list[str]:
    """The parts with a repeated answer said once: consecutive repeats (``\\boxed{004}`` boxed again
    after a check) and a whole list restated (``3, 5`` then a summary ``3, 5``)."""
    said = [t for i, t in enumerate(texts) if i == 0 or t != texts[i - 1]]
    for width in range(1, len(said) // 2 + 1):
        if len(said) % width == 0 and said == said[:width] * (len(said) // width):
            return said[:width]
    return said


def answer_in_sentence(normalized: str) -> str:
    """The answer a gold sentence states after its lead-in ("The final answer is (B) 1" states
    ``(B) 1``); the text unchanged when it has no lead-in or nothing follows it."""
    inner = _unwrap_leading_text(normalized)
    lead_in = _LEAD_IN.match(inner)
    if lead_in is None:
        return normalized
    answer = _HOPE.sub("", inner[lead_in.end() :]).strip().rstrip(".").strip()
    return answer or normalized


def _unwrap_leading_text(text: str) -> str:
    """``\\text{The final answer is (B) } 91`` as ``The final answer is (B) 91``: the words set in
    text at the start, out of their braces (a sentence may wrap its lead-in alone, or more)."""
    if not text.startswith("\\text{"):
        return text
    depth = 0
    for i in range(len("\\text"), len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return (text[len("\\text{") : i] + " " + text[i + 1 :]).strip()
    return text
