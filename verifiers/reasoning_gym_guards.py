"""What reasoning-gym's scorers would run as Python, read safely or refused before they see it.

Eleven families of reasoning-gym 0.1.25 evaluate text in ``score_answer``: the answer (the policy's)
or the entry (the request's), both hostile. A payload there runs in the process that computes the
reward: it could write files, and it could forge its own score, so sandboxing the scorer would not
help. The text never reaches the evaluating call:

- ``eval`` of the answer, meant for a Python list literal: ``spiral_matrix``, ``string_insertion``,
  ``binary_matrix``, ``n_queens``. ``SCORERS`` scores them here, the release's logic with
  ``ast.literal_eval`` in place of ``eval``: the same verdict on every literal, and on anything
  else what the release gives an answer its ``eval`` cannot read.
- ``eval`` of the entry: ``bitwise_arithmetic`` (``metadata.problem``, hex arithmetic, computed
  here over its syntax tree, in ``SCORERS``) and ``number_sorting`` (its ``answer`` when that is
  not JSON, as the release writes it: read as a literal and handed on as JSON, ``checked_entry``).
- ``sympy.parse_expr``, an ``eval`` after token rewriting whose namespace holds all of sympy and
  builtins such as ``__import__``, ``eval`` and ``open``: the answer in ``puzzle24``,
  ``countdown``, ``simple_integration``, ``intermediate_integration`` and
  ``polynomial_multiplication``; the entry in the last three (``metadata.integrand``,
  ``metadata.variable``, ``answer``). ``formula_refusal`` admits numbers, ``+ - * /``,
  parentheses and, where the family has them, ``** ^``, names sympy reads as new symbols and,
  for integrals, the elementary functions and constants; an answer it refuses scores what the family
  gives an answer it cannot parse, a reference it refuses is an error.

Every other family reads its text with ``int``, ``float``, ``Decimal``, ``Fraction``, ``complex``,
``json``, regular expressions or parsers of its own, none of which runs code.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from rewardhub.errors import VerifierError

__all__ = [
    "FORMULAS",
    "SCORERS",
    "Formula",
    "Refusal",
    "answer_refusal",
    "checked_entry",
    "formula_refusal",
    "hex_arithmetic",
]

FUNCTIONS = frozenset(
    {"sqrt", "exp", "log", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot"}
    | {"sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "Abs", "Integral"}
)
"""What an antiderivative may call (the integration families' integrands use sqrt, exp, log, sin,
cos, asin, atan; intermediate_integration's own golds hold ``Integral``, which the release pays
for any integrand, being its antiderivative by definition)."""

CONSTANTS = frozenset({"pi", "E", "I"})

_CHARACTERS = re.compile(r"[0-9A-Za-z_ \t.+\-*/^(),]*")  # ASCII only: no quotes, brackets, dots of attributes
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_POWERS = (ast.Pow, ast.BitXor)  # parse_expr reads ^ as Python's xor, which fails on symbols as the release does


class Refusal(NamedTuple):
    """An answer the release would evaluate: the score it gives one it cannot parse, and why."""

    score: float
    reason: str


@dataclass(frozen=True)
class Formula:
    """A family that hands the answer to ``sympy.parse_expr``, and what its formulas may hold."""

    malformed: float  # the release's score for an answer parse_expr cannot read
    symbols: bool = False  # names sympy reads as new symbols (the variables, an integration constant)
    powers: bool = False
    calculus: bool = False  # elementary functions and constants (the integrals)
    reference: Callable[[dict[str, Any]], dict[str, Any]] = lambda entry: {}  # the entry's parsed fields


def _integrand(entry: dict[str, Any]) -> dict[str, Any]:
    metadata = entry["metadata"]
    return {"metadata.integrand": metadata.get("integrand"), "metadata.variable": metadata.get("variable")}


FORMULAS = {
    "puzzle24": Formula(0.01),
    "countdown": Formula(0.01),
    "simple_integration": Formula(0.0, symbols=True, powers=True, calculus=True, reference=_integrand),
    "intermediate_integration": Formula(0.0, symbols=True, powers=True, calculus=True, reference=_integrand),
    "polynomial_multiplication": Formula(
        0.0, symbols=True, powers=True, reference=lambda entry: {"answer": entry.get("answer")}
    ),
}


@cache
def _sympy_names() -> frozenset[str]:
    """Names parse_expr resolves to an object rather than reading as a new symbol."""
    import sympy

    return frozenset(sympy.__all__) | frozenset(dir(builtins))


def _inert(name: str) -> bool:
    """A name parse_expr turns into a fresh ``Symbol``: it can reach nothing."""
    return bool(_IDENTIFIER.fullmatch(name)) and not keyword.iskeyword(name) and name not in _sympy_names()


def formula_refusal(text: str, formula: Formula) -> str | None:
    """Why ``text`` may not go to ``parse_expr`` for this family, or None when it may."""
    if not _CHARACTERS.fullmatch(text):
        bad = next(c for c in text if not _CHARACTERS.fullmatch(c))
        return f"character {bad!r} is not part of a formula"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "not a formula"
    operators = _ARITHMETIC + (_POWERS if formula.powers else ())
    for node in ast.walk(tree.body):
        why = _node_refusal(node, operators, formula)
        if why:
            return why
    return None


def _node_refusal(node: ast.AST, operators: tuple[type, ...], formula: Formula) -> str | None:
    calculus = formula.calculus
    if isinstance(node, ast.BinOp):
        return None if isinstance(node.op, operators) else f"operator {type(node.op).__name__}"
    if isinstance(node, ast.UnaryOp):
        return None if isinstance(node.op, ast.UAdd | ast.USub) else f"operator {type(node.op).__name__}"
    if isinstance(node, ast.Constant):
        plain = isinstance(node.value, int | float) and not isinstance(node.value, bool)
        return None if plain else f"constant {node.value!r}"
    if isinstance(node, ast.Name):
        known = calculus and node.id in FUNCTIONS | CONSTANTS
        return None if known or (formula.symbols and _inert(node.id)) else f"name {node.id!r}"
    if isinstance(node, ast.Call):
        called = node.func.id if isinstance(node.func, ast.Name) else None
        if calculus and called in FUNCTIONS and not node.keywords:
            return None
        return f"call of {ast.unparse(node.func)[:40]!r}"
    if isinstance(node, ast.Load | ast.operator | ast.unaryop):
        return None
    return f"{type(node).__name__} is not part of a formula"


def answer_refusal(task: str, answer: str | None) -> Refusal | None:
    """For a family that parses its answer with sympy: the release's verdict on an unreadable one, and why."""
    formula = FORMULAS.get(task)
    if formula is None or answer is None:
        return None
    why = formula_refusal(answer, formula)
    return None if why is None else Refusal(formula.malformed, f"not parsed ({why}): the release would evaluate it")


def checked_entry(task: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as the release may read it; a field it would evaluate that is not data is an error."""
    formula = FORMULAS.get(task)
    if formula is not None:
        for field, text in formula.reference(entry).items():
            why = formula_refusal(text, formula) if isinstance(text, str) else "not a string"
            if field == "metadata.variable" and why is None and not _inert(text.strip()):
                why = "not a symbol name"
            if why:
                raise VerifierError(f"reference.{field}: {task} parses it with sympy and it is not a formula ({why})")
    if task == "number_sorting":
        return _sorted_numbers_as_json(entry)
    return entry


def _sorted_numbers_as_json(entry: dict[str, Any]) -> dict[str, Any]:
    """number_sorting's gold, ``str(list)`` in the release, as JSON: the release evals what JSON cannot read."""
    gold = entry.get("answer")
    if not isinstance(gold, str):
        return entry
    try:
        json.loads(gold)
        return entry
    except (ValueError, RecursionError):
        pass
    try:
        return {**entry, "answer": json.dumps(_literal(gold))}
    except (ValueError, TypeError):
        raise VerifierError("reference.answer: number_sorting's gold is neither JSON nor a list literal") from None


def _literal(text: str) -> Any:
    """``ast.literal_eval``, every failure a ValueError (the release's ``eval`` of a literal gives the same value)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise ValueError("not a Python literal") from None


_NOT_A_LITERAL = Refusal(0.0, "not read (not a Python literal): the release would eval it")


def _spiral_matrix(answer: str | None, entry: dict[str, Any]) -> float | Refusal:
    oracle = entry["answer"].strip()
    if answer is None or not answer:
        return 0.0
    answer = answer.strip()
    if answer == oracle:
        return 1.0
    try:
        joined = " ".join(str(item) for item in _literal(answer))
    except ValueError:
        return _NOT_A_LITERAL
    except TypeError:
        return 0.0
    return 0.1 if joined == oracle else 0.0


def _string_insertion(answer: str | None, entry: dict[str, Any]) -> float | Refusal:
    oracle = entry["answer"]
    if not isinstance(answer, str):
        return 0.0
    if answer == oracle:
        return 1.0
    try:
        return 0.1 if "".join(_literal(answer)) == oracle else 0.0
    except ValueError:
        return _NOT_A_LITERAL
    except TypeError:
        return 0.0


def _binary_matrix(answer: str | None, entry: dict[str, Any]) -> float | Refusal:
    oracle = entry["answer"]
    if answer is None:
        return 0.0
    if answer == oracle:
        return 1.0
    try:
        rows = "\n".join(" ".join(str(x) for x in row) for row in _literal(answer))
    except ValueError:
        return _NOT_A_LITERAL
    except TypeError:
        return 0.0
    return 0.1 if rows == oracle else 0.0


def _n_queens(answer: str | None, entry: dict[str, Any]) -> float | Refusal:
    if not isinstance(answer, str):
        return 0.0
    valid = entry["metadata"]["valid_answers"]
    if answer in valid:
        return 1.0
    try:
        board = "\n".join(" ".join(x for x in row) for row in _literal(answer))
    except ValueError:
        return _NOT_A_LITERAL
    except TypeError:
        return 0.0
    return 0.5 if board in valid else 0.0


def hex_arithmetic(problem: Any) -> int:
    """bitwise_arithmetic's ``(0x1a + 0x2b) << 0x1`` without ``eval``: integers, ``+ - * << >>``, shifts up to 64."""
    if not isinstance(problem, str) or len(problem) > 10_000:
        raise ValueError("not an arithmetic expression")
    try:
        tree = ast.parse(problem.strip(), mode="eval")
        return _hex_value(tree.body)
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError("not an arithmetic expression") from None


_HEX_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}


def _hex_value(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_hex_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _HEX_OPERATORS:
        left, right = _hex_value(node.left), _hex_value(node.right)
        if isinstance(node.op, ast.LShift | ast.RShift) and not 0 <= right <= 64:
            raise ValueError(f"a shift by {right}")  # the generator shifts by 0 to 3
        return _HEX_OPERATORS[type(node.op)](left, right)
    raise ValueError(f"{type(node).__name__} in an arithmetic expression")


def _bitwise_arithmetic(answer: str | None, entry: dict[str, Any]) -> float:
    try:
        correct = hex_arithmetic(entry["metadata"]["problem"])
    except ValueError as exc:
        raise VerifierError(f"reference.metadata.problem: bitwise_arithmetic's problem is {exc}") from None
    if not isinstance(answer, str):
        return 0.0
    try:
        return 1.0 if int(answer, 0) == correct else 0.0
    except ValueError:
        return 0.0


SCORERS: dict[str, Callable[[str | None, dict[str, Any]], float | Refusal]] = {
    "spiral_matrix": _spiral_matrix,
    "string_insertion": _string_insertion,
    "binary_matrix": _binary_matrix,
    "n_queens": _n_queens,
    "bitwise_arithmetic": _bitwise_arithmetic,
}
"""Families whose released scorer ``eval``s text, scored here with the release's logic and no ``eval``
(a Refusal where the release would have evaluated an answer that is not a literal)."""
