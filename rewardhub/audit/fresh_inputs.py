"""Fresh inputs for a function, made from the literal calls in its own tests.

A mutant the tests accept is a finding only if it is really wrong: ``x >= 0`` for ``x > 0`` on a
function never called with 0 behaves as the reference does everywhere the problem is defined,
and accepting it is no fault of the tests. So a surviving mutant is run beside the reference on
inputs the tests never show; it is *broken* only when the two disagree on one of them.

The inputs come from the tests' own calls of the function (``candidate([1, 2], 3)``), each
argument varied inside what the tests show of its domain: a number stays an int or a float and
keeps the lowest sign seen (never below 0 when no test goes below, never below 1 when none goes
below 1), a string keeps the characters (or, with spaces, the words) the tests use, a list keeps
its element domain and stays sorted or duplicate-free when every tested list is. Inputs that
break a rule no test shows (a relation between two arguments, a docstring's promise) can still
be made; the report says which input told the mutant apart, so a reader can judge it.

Pure functions: source text in, argument lists out, seeded.
"""

from __future__ import annotations

import ast
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Domain", "domain_of", "fresh_calls", "literal_calls", "vary"]

STEPS = (-3, -2, -1, 1, 2, 3, 5)


@dataclass(frozen=True)
class Domain:
    """What every value the tests pass at one argument position has in common."""

    kind: str  # "bool", "int", "float", "str", "seq", "any"
    lowest: int | None = None  # numbers: 0 or 1 when no test goes below it
    alphabet: tuple[str, ...] = ()  # strings: the characters (or the words) seen
    words: bool = False
    sorted: bool = False  # sequences
    unique: bool = False
    element: Domain | None = None


def literal_calls(test_source: str, names: Sequence[str]) -> list[list[Any]]:
    """The argument lists of every call of one of ``names`` whose arguments are all literals."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return []
    calls: list[list[Any]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
                continue
            try:
                args = [ast.literal_eval(arg) for arg in node.args]
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if args and args not in calls:
                calls.append(args)
    return calls


def _sorted(values: Sequence[Any]) -> bool:
    try:
        return all(a <= b for a, b in zip(values, values[1:], strict=False))
    except TypeError:
        return False


def domain_of(values: Sequence[Any]) -> Domain:
    if not values:
        return Domain("any")
    if all(isinstance(v, bool) for v in values):
        return Domain("bool")
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        low = min(values)
        lowest = 1 if low >= 1 else 0 if low >= 0 else None
        return Domain("int" if all(isinstance(v, int) for v in values) else "float", lowest=lowest)
    if all(isinstance(v, str) for v in values):
        words = any(" " in v.strip() for v in values)
        alphabet = sorted({w for v in values for w in v.split()} if words else {c for v in values for c in v})
        return Domain("str", alphabet=tuple(alphabet), words=words)
    if all(isinstance(v, list | tuple) for v in values):
        evidence = [v for v in values if len(v) >= 2]
        return Domain(
            "seq",
            sorted=bool(evidence) and all(_sorted(v) for v in evidence),
            unique=bool(evidence) and all(len({repr(x) for x in v}) == len(v) for v in evidence),
            element=domain_of([x for v in values for x in v]),
        )
    return Domain("any")


def vary(value: Any, domain: Domain, rng: random.Random, depth: int = 0) -> Any:
    """A new value shaped like ``value``, inside ``domain``."""
    if depth > 4 or domain.kind == "any":
        return value
    if domain.kind == "bool" and isinstance(value, bool):
        return not value
    if domain.kind in ("int", "float") and isinstance(value, int | float) and not isinstance(value, bool):
        out = value + rng.choice(STEPS) if isinstance(value, int) else round(value + rng.uniform(-3, 3), 3)
        if domain.lowest is not None and out < domain.lowest:
            out = 2 * domain.lowest - out  # mirrored back inside
        return out
    if domain.kind == "str" and isinstance(value, str):
        pool = list(domain.alphabet) or list(string.ascii_lowercase)
        if domain.words:
            count = max(1, len(value.split()) + rng.choice((-1, 0, 0, 1)))
            return " ".join(rng.choice(pool) for _ in range(count))
        length = max(1, len(value) + rng.choice((-1, 0, 0, 1))) if value else 1
        return "".join(rng.choice(pool) for _ in range(length))
    if domain.kind == "seq" and isinstance(value, list | tuple) and value and domain.element is not None:
        length = max(1, len(value) + rng.choice((-1, 0, 0, 1)))
        items = [vary(value[i % len(value)], domain.element, rng, depth + 1) for i in range(length)]
        if domain.unique:
            seen: set[str] = set()
            items = [x for x in items if not (repr(x) in seen or seen.add(repr(x)))] or items[:1]
        if domain.sorted:
            try:
                items = sorted(items)
            except TypeError:
                pass
        return type(value)(items)
    return value


def fresh_calls(calls: Sequence[Sequence[Any]], count: int = 8, seed: int = 0) -> list[list[Any]]:
    """Up to ``count`` argument lists none of the tests uses, each varied from one of ``calls``."""
    if not calls or count <= 0:
        return []
    rng = random.Random(seed)
    domains: dict[int, list[Domain]] = {}
    for arity in {len(c) for c in calls}:
        same = [c for c in calls if len(c) == arity]
        domains[arity] = [domain_of([c[j] for c in same]) for j in range(arity)]
    seen = {repr(list(c)) for c in calls}
    out: list[list[Any]] = []
    for attempt in range(count * 4):
        if len(out) >= count:
            break
        base = calls[attempt % len(calls)]
        candidate = [vary(arg, domain, rng) for arg, domain in zip(base, domains[len(base)], strict=True)]
        if repr(candidate) not in seen:
            seen.add(repr(candidate))
            out.append(candidate)
    return out
