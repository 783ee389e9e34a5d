"""The README and the guides in ``docs/`` as the tests read them: their pages and their fenced blocks.

A block that a test runs is marked on the line above its fence with ``<!-- contract: NAME -->``;
tests fetch it by that name with :func:`doc_block`, whichever page it lives on, so a snippet can
move between guides without its test changing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FENCE = re.compile(
    r"(?:^<!-- contract: (?P<name>[\w-]+) -->\n)?^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    body: str
    name: str | None  # the contract name, when a test runs the block

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every guide in docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        fence_at = match.start("lang") - 3
        line = text.count("\n", 0, fence_at) + 1
        found.append(Block(page, line, match["lang"], match["body"].removesuffix("\n"), match["name"]))
    return found


def doc_blocks() -> dict[str, Block]:
    """Every marked block of the README and the guides, by name; a name used twice is an error."""
    named: dict[str, Block] = {}
    for page in pages():
        for block in blocks(page):
            if block.name is None:
                continue
            if block.name in named:
                raise ValueError(
                    f"contract block {block.name!r} twice: {named[block.name].where()} and {block.where()}"
                )
            named[block.name] = block
    return named


def doc_block(name: str) -> str:
    """The text of the block marked ``<!-- contract: NAME -->`` in the README or a guide."""
    named = doc_blocks()
    if name not in named:
        raise KeyError(f"no block marked <!-- contract: {name} --> in README.md or docs/ (there are {sorted(named)})")
    return named[name].body
