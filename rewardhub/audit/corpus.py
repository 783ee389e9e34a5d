"""The exploit corpus that ships with rewardhub, and which part of it a verifier faces.

The corpus lives in ``exploits/*.jsonl`` beside this module, one file per family of verifier:
``math``, ``code``, ``judge``, ``format``, ``tool_call``, ``sql``, ``grounding``, ``reasoning_gym``. Every exploit was written for this project
and names what inspired it. A verifier faces the family it belongs to: its class attribute
``exploit_corpus`` when it sets one (plugins do this to be audited like built-ins), else the
built-in table below, else its kind (``code`` and ``judge`` verifiers share their kind's attacks).
A composite spec faces the families of all its leaves.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from rewardhub.audit.cases import Exploit
from rewardhub.compose import leaves, resolve
from rewardhub.errors import InvalidRequest
from rewardhub.registry import Registry
from rewardhub.types import VerifierSpec

__all__ = ["CORPORA", "corpora_for", "load_corpus"]

CORPORA = ("math", "code", "judge", "format", "tool_call", "sql", "grounding", "reasoning_gym")

_BY_NAME: dict[str, str | None] = {
    "math": "math",
    "code": "code",
    "judge": "judge",
    "format": "format",
    "tool_call": "tool_call",
    "rubric": None,  # its reference is a rubric, not the gold answers the judge corpus attacks with
}
_BY_KIND = {"code": "code", "judge": "judge"}


@cache
def load_corpus(name: str) -> tuple[Exploit, ...]:
    """The exploits of one family (validated: a malformed line is a bug in the package)."""
    if name not in CORPORA:
        raise InvalidRequest(f"no exploit corpus named {name!r}; there are {', '.join(CORPORA)}")
    text = (resources.files("rewardhub.audit") / "exploits" / f"{name}.jsonl").read_text(encoding="utf-8")
    return tuple(Exploit.model_validate(json.loads(line)) for line in text.splitlines() if line.strip())


def corpora_for(spec: VerifierSpec, registry: Registry) -> list[str]:
    """The families of exploits a spec faces, in first-seen order (may be empty)."""
    found: list[str] = []
    for leaf in leaves(resolve(spec, registry)):
        cls = registry.verifier_class(leaf.name)
        family = getattr(cls, "exploit_corpus", None)
        if family is None:
            family = _BY_NAME[leaf.name] if leaf.name in _BY_NAME else _BY_KIND.get(cls.kind)
        if family and family not in found:
            found.append(family)
    return found


def exploits_for(spec: VerifierSpec, registry: Registry, chosen: list[str] | None = None) -> list[Exploit]:
    """The exploits to run: the named families (``chosen``), else the spec's own."""
    names = chosen if chosen is not None else corpora_for(spec, registry)
    return [exploit for name in names for exploit in load_corpus(name)]
