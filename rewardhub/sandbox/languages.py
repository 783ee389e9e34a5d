"""The languages the sandbox runs. Adding one is one declaration in ``LANGUAGES``.

Commands run in the scratch directory, which holds the source under ``source``; ``compile`` (if
any) runs first under the compile limits and must produce ``./main``. Python is special only in
being fast: its programs run inside the warm interpreter (a fork of the server), not ``run``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from rewardhub.sandbox.errors import UnsupportedLanguage

__all__ = ["LANGUAGES", "Language", "language"]


@dataclass(frozen=True)
class Language:
    name: str
    source: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    in_process: bool = False
    """Run inside the warm Python interpreter instead of executing ``run``."""

    def available(self) -> bool:
        """Whether this machine has the tools (the sandbox sees the same /usr as the host)."""
        tools = [self.run[0]] + ([self.compile[0]] if self.compile else [])
        return self.in_process or all(tool.startswith("./") or shutil.which(tool) for tool in tools)


LANGUAGES: tuple[Language, ...] = (
    Language("python", "main.py", run=("python3", "main.py"), aliases=("py", "python3"), in_process=True),
    Language("c", "main.c", run=("./main",), compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm")),
    Language(
        "cpp",
        "main.cpp",
        run=("./main",),
        compile=("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp"),
        aliases=("c++", "cxx"),
    ),
    Language("javascript", "main.js", run=("node", "main.js"), aliases=("js", "node", "nodejs")),
)

_BY_NAME = {name: lang for lang in LANGUAGES for name in (lang.name, *lang.aliases)}


def language(name: str) -> Language:
    """The language called ``name`` (or one of its aliases), if this machine can run it."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        raise UnsupportedLanguage(f"unsupported language {name!r}", detail={"supported": sorted(_BY_NAME)})
    if not found.available():
        raise UnsupportedLanguage(f"language {found.name!r} is not installed on this server")
    return found
