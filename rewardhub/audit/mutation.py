"""Single-site mutants of a reference solution: the reference broken in one small place.

A test suite is only as strong as the wrong programs it rejects. A mutant differs from the
reference at one site (a comparison flipped, an operator swapped, a constant nudged, a ``return``
emptied, ...), so a mutant the tests accept names one behaviour they never pin down. These are
the kinds the ``gameability`` census uses (``cmp``, ``arith``, ``bool``, ``boolconst``,
``intconst``, ``return_none``) and six of ours that model the other mistakes a policy makes:
a constant nudged down (``const_down``), a condition negated (``negate``), a ``not`` or a minus
dropped (``unary_drop``), ``min``/``max`` and ``any``/``all`` swapped (``minmax``), a ``range``
one short (``off_by_one``), a slice bound moved by one (``slice_bound``) and a loop that stops
after its first pass (``loop_once``, the early exit).

Everything here is pure: source text in, source text out. A mutant is the reference's own text
with only the mutated node's span rewritten, so its diff is one line and its comments stay; it
is kept only when it parses to exactly the tree the mutation meant (a span whose operator binds
less tightly than its context is parenthesised; one that still differs falls back to the
mutated tree unparsed), and when that tree differs from the reference's.
"""

from __future__ import annotations

import ast
import copy
import difflib
import random
from collections.abc import Callable, Collection
from dataclasses import dataclass

__all__ = ["GAMEABILITY_KINDS", "KINDS", "Mutant", "Site", "apply_site", "mutants", "sites", "unified_diff"]

CMP_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BIN_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.Mult,
    ast.Pow: ast.Mult,
}
BOOL_SWAP: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}
GAMEABILITY_KINDS = ("arith", "bool", "boolconst", "cmp", "intconst", "return_none")
"""The kinds the gameability census mutates with (the rest are ours)."""
CALL_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}


@dataclass(frozen=True)
class Site:
    """Where a mutation applies: the node's position in ``ast.walk`` order (stable for one source) and the kind."""

    index: int
    kind: str


@dataclass(frozen=True)
class Mutant:
    kind: str
    index: int
    source: str
    diff: str
    """A unified diff against the reference."""


def _cmp(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in CMP_SWAP:
        return ast.Compare(node.left, [CMP_SWAP[type(node.ops[0])]()], node.comparators)
    return None


def _arith(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.BinOp) and type(node.op) in BIN_SWAP:
        return ast.BinOp(node.left, BIN_SWAP[type(node.op)](), node.right)
    return None


def _bool(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.BoolOp) and type(node.op) in BOOL_SWAP:
        return ast.BoolOp(BOOL_SWAP[type(node.op)](), node.values)
    return None


def _is_int(node: ast.AST) -> bool:
    # bool is an int subclass: True/False belong to boolconst
    return isinstance(node, ast.Constant) and type(node.value) is int


def _boolconst(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return ast.Constant(not node.value)
    return None


def _intconst(node: ast.AST) -> ast.AST | None:
    return ast.Constant(node.value + 1) if _is_int(node) else None  # type: ignore[attr-defined]


def _const_down(node: ast.AST) -> ast.AST | None:
    if not _is_int(node):
        return None
    value = node.value - 1  # type: ignore[attr-defined]
    # a negative literal is a minus applied to a constant in Python's tree: build what `-1` parses to
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def _return_none(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return ast.Return(ast.Constant(None))
    return None


def _negate(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        replaced = copy.copy(node)
        replaced.test = ast.UnaryOp(ast.Not(), node.test)
        return replaced
    return None


def _unary_drop(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        if not (isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)):
            return node.operand
    return None


def _minmax(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CALL_SWAP:
        return ast.Call(ast.Name(CALL_SWAP[node.func.id], ast.Load()), node.args, node.keywords)
    return None


def _off_by_one(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        if 1 <= len(node.args) <= 2 and not node.keywords:
            stop = 0 if len(node.args) == 1 else 1
            args = list(node.args)
            args[stop] = ast.BinOp(args[stop], ast.Sub(), ast.Constant(1))
            return ast.Call(node.func, args, [])
    return None


def _slice_bound(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Slice) and (node.upper is not None or node.lower is not None):
        if node.upper is not None:
            return ast.Slice(node.lower, ast.BinOp(node.upper, ast.Sub(), ast.Constant(1)), node.step)
        return ast.Slice(ast.BinOp(node.lower, ast.Add(), ast.Constant(1)), None, node.step)
    return None


def _loop_once(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.For | ast.While) and not isinstance(node.body[-1], ast.Break):
        replaced = copy.copy(node)
        replaced.body = [*node.body, ast.Break()]
        return replaced
    return None


KINDS: dict[str, Callable[[ast.AST], ast.AST | None]] = {
    # the gameability census's kinds
    "cmp": _cmp,
    "arith": _arith,
    "bool": _bool,
    "boolconst": _boolconst,
    "intconst": _intconst,
    "return_none": _return_none,
    # ours
    "const_down": _const_down,
    "negate": _negate,
    "unary_drop": _unary_drop,
    "minmax": _minmax,
    "off_by_one": _off_by_one,
    "slice_bound": _slice_bound,
    "loop_once": _loop_once,
}
"""Each kind: the node that replaces a node, or None where the kind does not apply."""


def _untouchable(tree: ast.AST) -> set[int]:
    """Nodes inside f-strings (whose positions Python 3.11 does not give reliably) and docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.update(id(inner) for inner in ast.walk(node))
    return out


def sites(source: str) -> list[Site]:
    """Every (node, kind) a mutation applies to, in ``ast.walk`` order; none for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    skip = _untouchable(tree)
    return [
        Site(index, kind)
        for index, node in enumerate(ast.walk(tree))
        if id(node) not in skip
        for kind, make in KINDS.items()
        if make(node) is not None
    ]


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    out: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                out[id(value)] = (parent, field, None)
            elif isinstance(value, list):
                for position, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        out[id(item)] = (parent, field, position)
    return out


def _mutated_tree(source: str, site: Site) -> tuple[ast.Module, ast.AST, ast.AST] | None:
    """The whole tree with the site replaced, the original node and its replacement."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    if site.index >= len(nodes):
        return None
    node = nodes[site.index]
    replacement = KINDS[site.kind](copy.deepcopy(node))
    if replacement is None:
        return None
    parent, field, position = _parents(tree)[id(node)]
    if position is None:
        setattr(parent, field, replacement)
    else:
        getattr(parent, field)[position] = replacement
    return tree, node, replacement


def _byte_offsets(source: str) -> list[int]:
    starts, total = [0], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _spliced(source: str, node: ast.AST, text: str, append_line: bool) -> str:
    """``source`` with ``node``'s span replaced by ``text`` (or, for a statement, a line added after its body)."""
    raw, starts = source.encode("utf-8"), _byte_offsets(source)
    if append_line:  # loop_once: `break` at the indentation of the body's last statement
        last = node.body[-1]  # type: ignore[attr-defined]
        if last.lineno == node.lineno:  # type: ignore[attr-defined]  # a one-line loop: no room for a line
            raise ValueError("one-line loop")
        indent = raw[starts[last.lineno - 1] : starts[last.lineno - 1] + last.col_offset].decode("utf-8")
        end = starts[last.end_lineno]
        return raw[:end].decode("utf-8").rstrip("\n") + "\n" + indent + text + "\n" + raw[end:].decode("utf-8")
    begin = starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    return (raw[:begin] + text.encode("utf-8") + raw[end:]).decode("utf-8")


def apply_site(source: str, site: Site) -> str | None:
    """The mutant's source, or None when the site does not apply or the mutant equals the reference."""
    made = _mutated_tree(source, site)
    if made is None:
        return None
    tree, node, replacement = made
    wanted = ast.dump(tree)
    if wanted == ast.dump(ast.parse(source)):
        return None
    if site.kind == "loop_once":
        attempts = [("break", True)]
    elif site.kind == "negate":  # only the test changes: rewrite its span, not the whole statement
        node = node.test  # type: ignore[attr-defined]
        attempts = [(f"not ({ast.unparse(node)})", False)]
    else:
        text = ast.unparse(replacement)
        attempts = [(text, False), (f"({text})", False)]
    for text, append in attempts:
        try:
            candidate = _spliced(source, node, text, append)
            if ast.dump(ast.parse(candidate)) == wanted:
                return candidate
        except (SyntaxError, ValueError):
            continue
    return ast.unparse(tree)  # the span could not be rewritten alone: the whole program, normalised


def unified_diff(reference: str, mutant: str, name: str = "reference") -> str:
    lines = difflib.unified_diff(
        reference.splitlines(keepends=True),
        mutant.splitlines(keepends=True),
        fromfile=name,
        tofile="mutant",
        n=1,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def mutants(source: str, limit: int = 24, seed: int = 0, kinds: Collection[str] | None = None) -> list[Mutant]:
    """At most ``limit`` distinct mutants of ``source``, spread across kinds, in a seeded order.

    ``kinds`` keeps only those kinds (all of :data:`KINDS` when None).

    The cap is shared round-robin among the kinds (sorted by name), so a long function is not
    tested only where its first sites are; within a kind the sites are shuffled by
    ``random.Random(f"{seed}:{kind}")``. The same source, limit and seed give the same mutants.
    """
    by_kind: dict[str, list[Site]] = {}
    for site in sites(source):
        if kinds is not None and site.kind not in kinds:
            continue
        by_kind.setdefault(site.kind, []).append(site)
    for kind, listed in by_kind.items():
        random.Random(f"{seed}:{kind}").shuffle(listed)
    out: list[Mutant] = []
    seen = {ast.dump(ast.parse(source))} if by_kind else set()
    round_no = 0
    while len(out) < limit and any(round_no < len(listed) for listed in by_kind.values()):
        for kind in sorted(by_kind):
            if len(out) >= limit:
                break
            if round_no >= len(by_kind[kind]):
                continue
            site = by_kind[kind][round_no]
            text = apply_site(source, site)
            if text is None:
                continue
            shape = ast.dump(ast.parse(text))
            if shape in seen:  # two sites, one program (x - 1 from both const_down and arith)
                continue
            seen.add(shape)
            out.append(Mutant(kind, site.index, text, unified_diff(source, text)))
        round_no += 1
    return out
