"""Tagged elements of a response (``<answer>…</answer>``), found in linear time.

``re.finditer(r"<answer>(.*?)</answer>", text)`` tries every opening tag and, when no closing
tag follows, scans to the end from each: twenty thousand ``<answer>`` cost a minute. The scan here
gives the same elements (each opening matched with the first closing tag after it, the next
search starting past that) and stops at the first opening with no closing tag after it, since no
later one can have one either.
"""

from __future__ import annotations

__all__ = ["elements"]


def elements(text: str, name: str, *, attributes: bool = False) -> list[tuple[int, str, str]]:
    """``(offset, opening tag, body)`` of each ``<name>…</name>`` in ``text``, case-insensitively.

    With ``attributes``, an opening tag may carry them (``<point x="1" y="2">``); otherwise it is
    exactly ``<name>``.
    """
    lowered = text.lower()
    opening, closing = f"<{name.lower()}", f"</{name.lower()}>"
    found: list[tuple[int, str, str]] = []
    i = 0
    while True:
        start = lowered.find(opening, i)
        if start < 0:
            return found
        after = start + len(opening)
        if attributes:
            if after < len(text) and text[after] not in "> \t\r\n":
                i = after  # <pointer> is not <point>
                continue
            head_end = text.find(">", after)
        else:
            head_end = after if text.startswith(">", after) else -1
            if head_end < 0:
                i = after
                continue
        if head_end < 0:
            return found
        end = lowered.find(closing, head_end + 1)
        if end < 0:
            return found
        found.append((start, text[start : head_end + 1], text[head_end + 1 : end]))
        i = end + len(closing)
