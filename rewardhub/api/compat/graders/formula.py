"""``calculate_output`` of a multi grader: arithmetic over sub-grader names, evaluated safely.

The formula is parsed with :mod:`ast` and only numbers, names of sub-graders, ``+ - * /``, unary
``+``/``-``, parentheses and calls of ``min``, ``max`` and ``abs`` are accepted. Nothing is ever
passed to ``eval``: anything else (attributes, subscripts, other calls, keywords) is refused when
the formula is checked, before any grader runs.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass

from rewardhub.errors import InvalidRequest

__all__ = ["Formula", "FormulaError", "parse_formula"]

MAX_CHARS = 2_000
MAX_NODES = 500

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max, "abs": abs}


class FormulaError(ValueError):
    """The formula could not be evaluated for these scores (division by zero, a non-finite value)."""


@dataclass(frozen=True)
class Formula:
    source: str
    tree: ast.Expression
    names: frozenset[str]

    def evaluate(self, scores: Mapping[str, float]) -> float:
        try:
            value = _evaluate(self.tree.body, scores)
        except ZeroDivisionError:
            raise FormulaError(f"division by zero in {self.source!r}") from None
        if not math.isfinite(value):
            raise FormulaError(f"{self.source!r} is not finite for these scores")
        return value


def parse_formula(source: str, known: Set[str]) -> Formula:
    """Check ``source`` and return it ready to evaluate; 422 for anything but safe arithmetic."""
    if len(source) > MAX_CHARS:
        raise _refuse(source, f"longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _refuse(source, f"does not parse: {exc}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise _refuse(source, f"more than {MAX_NODES} syntax nodes")
    names: set[str] = set()
    callees = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    for node in nodes:
        _check(node, source, known, names, callees)
    return Formula(source, tree, frozenset(names))


def _check(node: ast.AST, source: str, known: Set[str], names: set[str], callees: Set[int]) -> None:
    if isinstance(node, ast.Expression | ast.Load) or type(node) in _BINARY or type(node) in _UNARY:
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise _refuse(source, f"operator {type(node.op).__name__} is not allowed (only + - * /)")
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise _refuse(source, f"operator {type(node.op).__name__} is not allowed")
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise _refuse(source, f"constant {node.value!r} is not a number")
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords or not node.args:
            raise _refuse(source, "only min(...), max(...) and abs(...) may be called, with positional arguments")
        if node.func.id == "abs" and len(node.args) != 1:
            raise _refuse(source, "abs takes one argument")
    elif isinstance(node, ast.Name):
        if id(node) in callees:
            return  # checked with its Call
        if node.id not in known:
            raise _refuse(source, f"{node.id!r} is not one of the graders ({', '.join(sorted(known))})")
        names.add(node.id)
    else:
        raise _refuse(source, f"{type(node).__name__} is not allowed in a formula")


def _evaluate(node: ast.expr, scores: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return float(scores[node.id])
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, scores))
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, scores), _evaluate(node.right, scores))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return float(_FUNCTIONS[node.func.id](*(_evaluate(arg, scores) for arg in node.args)))
    raise FormulaError(f"unexpected {type(node).__name__}")  # _check refused it already


def _refuse(source: str, why: str) -> InvalidRequest:
    return InvalidRequest(f"calculate_output {source!r}: {why}", detail={"error": "formula_parse_error"})
