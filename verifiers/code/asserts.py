"""Assert-style tests (HumanEval, MBPP) split so that their expected values never enter the sandbox.

``assert f(1) == 2`` run as-is inside the sandbox would trust the program twice: ``f`` could return
an object whose ``__eq__`` always says True, or read the constant ``2`` off the caller's frame.
So each assert is planned in the trusted parent:

- the parts that involve the program (calls, names, anything we do not interpret) become *leaves*,
  whose source is sent to the sandbox; each leaf's value comes back strictly encoded (see
  :mod:`rewardhub.sandbox.inside.wire`), so an object that is not plain data fails the test;
- the rest of the expression, literals, comparisons, ``and``/``or``/``not``, arithmetic and a few
  pure built-ins (``abs``, ``sorted``, ``set``, ``math.isclose``...), is evaluated here, on the
  decoded values. The expected ``2`` stays in the parent.

Asserts that cannot be split one by one (inside a ``for`` loop, a ``with`` block, EvalPlus's
``assertion(...)`` helper) make the whole test one :class:`WholeCheck`, run in a process of its
own that calls the program's functions across a process boundary and gets plain values back.
So does an assert with a leaf the program never touched, a value of the test's own
(``odd_sum = sum(...); assert candidate(lst) == odd_sum``, HumanEval/151), and every assert after
the statement that computes it: a leaf, and a setup, is evaluated in the program's process.

What it does not cover: an expected value written inside a leaf that also calls the program (say
``candidate(1) == (2 if candidate else 3)``) travels with that leaf; a test whose statements (not
asserts) call the program trusts the program's side effects.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["AssertPlan", "LeafFailed", "WholeCheck", "free_names", "plan_asserts"]

LEAF = "__leaf_"

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs, "round": round, "len": len, "sorted": sorted, "set": set, "frozenset": frozenset,
    "list": list, "tuple": tuple, "sum": sum, "min": min, "max": max, "float": float, "int": int,
    "bool": bool, "str": str, "isclose": math.isclose, "math.isclose": math.isclose, "math.fabs": math.fabs,
}  # fmt: skip
"""Pure built-ins the parent applies itself (to plain values only)."""
_MAX_REPEAT = 1 << 20


class LeafFailed(Exception):
    """A leaf the assert needed could not be computed (the program raised, or returned a non-plain value)."""


@dataclass(frozen=True)
class AssertPlan:
    source: str
    """The assert as written (for details)."""
    setup: str
    """The test's statements before this assert, run in the sandbox after the program."""
    leaves: tuple[str, ...]
    """Expressions the sandbox evaluates, in order; the rest of ``expression`` is ours."""
    expression: ast.expr

    def holds(self, values: list[Any]) -> bool:
        """Whether the assert holds, given each leaf's decoded value (or a LeafFailed to raise)."""
        return bool(_evaluate(self.expression, values))


@dataclass(frozen=True)
class WholeCheck:
    """A test whose asserts cannot be split (inside loops, ``with`` blocks, helper functions): run whole.

    It runs in the sandbox in a process that never executes the program's code: the program runs in
    a process of its own and answers calls of its functions with strictly typed plain values (see
    :mod:`rewardhub.sandbox.inside.check_process`). Only the test's process holds the result
    channel, and it writes its one record after the check has returned.
    """

    source: str
    """The test, ending with the statement that runs it (HumanEval's ``check(entry_point)``)."""
    names: tuple[str, ...]
    """What the test needs from the program (its functions, or constants it defines)."""
    why: str
    """Why it could not be split one assert at a time."""


def plan_asserts(test_code: str, entry_point: str | None = None) -> list[AssertPlan | WholeCheck]:
    """One plan per assert where they can be split (top-level asserts, MBPP; those at the top of
    ``check(candidate)``, HumanEval), else the whole test as one :class:`WholeCheck`.

    The entry point comes from the test's own ``check(name)`` call if it has one (HumanEval's
    harness appends exactly that), else from ``entry_point``.
    """
    tree = ast.parse(test_code)
    if not any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        raise ValueError("the tests contain no assert statements")
    statements = list(tree.body)
    check = next((s for s in statements if isinstance(s, ast.FunctionDef) and s.name == "check"), None)
    whole_source = test_code
    if check is not None and not any(isinstance(s, ast.Assert) for s in statements):
        entry_point = _entry_point_called(statements) or entry_point
        if entry_point is None or not entry_point.isidentifier():
            raise ValueError(
                "the tests define check(candidate) but name no function: call check(f) or give entry_point"
            )
        prelude = [s for s in statements if s is not check and not _calls_check(s)]
        candidate = check.args.args[0].arg if check.args.args else "candidate"
        statements = prelude + ast.parse(f"{candidate} = {entry_point}").body + list(check.body)
        whole_source = f"{_source(prelude + [check])}\ncheck({entry_point})\n"
    nested = _nested_assert(statements)
    if nested is not None:
        return [WholeCheck(whole_source, free_names(whole_source), nested)]
    whole = _own_values(statements, free_names(whole_source))
    plans: list[AssertPlan | WholeCheck] = []
    setup: list[ast.stmt] = []
    for index, statement in enumerate(statements):
        if isinstance(statement, ast.Assert):
            leaves: list[str] = []
            expression = _split(statement.test, leaves)
            if not leaves:  # HumanEval's ``assert True, "..."`` lines test nothing: no free credit for them
                continue
            if index in whole:
                source = _source([*setup, statement])
                why = f"a value of the test's own reaches this assert (line {statement.lineno})"
                plans.append(WholeCheck(source, free_names(source), why))
            else:
                plans.append(AssertPlan(ast.unparse(statement), _source(setup), tuple(leaves), expression))
        else:
            setup.append(statement)
    if not plans:
        raise ValueError("the asserts never involve the program")
    return plans


def _nested_assert(statements: list[ast.stmt]) -> str | None:
    """Why the asserts cannot be split one by one (one of them sits inside another statement), or None."""
    for statement in statements:
        if isinstance(statement, ast.Assert):
            continue
        if any(isinstance(node, ast.Assert) for node in ast.walk(statement)):
            kind = type(statement).__name__.removeprefix("Async").lower()
            where = {
                "functiondef": "a helper function",
                "for": "a for loop",
                "while": "a while loop",
                "with": "a with block",
            }
            return f"asserts inside {where.get(kind, f'a {kind} statement')} (line {statement.lineno})"
        if isinstance(statement, ast.Return | ast.Raise):
            return f"a {type(statement).__name__.lower()} statement between the asserts (line {statement.lineno})"
    return None


def _own_values(statements: list[ast.stmt], program: tuple[str, ...]) -> set[int]:
    """The asserts (their indexes in ``statements``) that must run whole, or a value of the test's
    own (an expected answer, as ``expected = sum(...); assert f(x) == expected`` has it) would
    enter the program's process.

    A split assert's leaves and setup are evaluated where the program runs (and a series of them
    holds every test's), so a leaf may hold only what the program touched: its functions, what they
    returned, what was passed to them. An assert with a leaf that touches none of those runs whole,
    in a process the program cannot read; so does every assert after a statement that computes such
    a value, since that statement would be in its setup.
    """
    touched = set(program)
    own_statements: list[int] = []
    own_asserts: set[int] = set()
    needed: set[str] = set()
    for index, statement in enumerate(statements):
        if not isinstance(statement, ast.Assert):
            if _loaded(statement) & touched:  # the program computed these names, or saw them
                touched |= _loaded(statement) | _bound(statement)
            elif not isinstance(statement, ast.Import | ast.ImportFrom):
                own_statements.append(index)
            continue
        leaves: list[str] = []
        _split(statement.test, leaves)
        names = [_loaded(ast.parse(leaf, mode="eval")) for leaf in leaves]
        for _ in names:  # ``f(x) == x``: x went to the program, so it is the program's to report
            for loaded in names:
                if loaded & touched:
                    touched |= loaded
        own = [loaded for loaded in names if not loaded & touched]
        if own:
            own_asserts.add(index)
            needed |= set().union(*own)
    secret = len(statements)
    for index in reversed(own_statements):  # what the own leaves need, back to where it is computed
        if _bound(statements[index]) & needed:
            needed |= _loaded(statements[index])
            secret = index
    return own_asserts | {i for i, s in enumerate(statements) if isinstance(s, ast.Assert) and i > secret}


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _bound(node: ast.AST) -> set[str]:
    """Names a statement binds: assigned, defined (``def``, ``class``) or imported."""
    bound = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
    return bound


def _entry_point_called(statements: list[ast.stmt]) -> str | None:
    for statement in statements:
        if _calls_check(statement):
            call = statement.value  # type: ignore[attr-defined]
            if len(call.args) == 1 and isinstance(call.args[0], ast.Name):
                return call.args[0].id
    return None


def free_names(source: str) -> tuple[str, ...]:
    """Names the test reads but never binds and that are not built-ins: what it needs from the program."""
    tree = ast.parse(source)
    loaded: list[str] = []
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loaded.append(node.id)
        elif isinstance(node, ast.Name):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    known = bound | set(dir(builtins))
    return tuple(dict.fromkeys(name for name in loaded if name not in known))


def _calls_check(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and _name(statement.value.func) == "check"
    )


def _source(statements: list[ast.stmt]) -> str:
    return ast.unparse(ast.Module(body=statements, type_ignores=[])) if statements else ""


def _split(node: ast.expr, leaves: list[str]) -> ast.expr:
    """``node`` with every part the parent does not evaluate replaced by a leaf placeholder."""
    match node:
        case ast.Constant():
            return node
        case ast.List() | ast.Tuple() | ast.Set():
            return type(node)(elts=[_split(e, leaves) for e in node.elts], **_ctx(node))
        case ast.Dict() if None not in node.keys:
            return ast.Dict(
                keys=[_split(k, leaves) for k in node.keys if k is not None],
                values=[_split(v, leaves) for v in node.values],
            )
        case ast.Compare():
            return ast.Compare(
                left=_split(node.left, leaves), ops=node.ops, comparators=[_split(c, leaves) for c in node.comparators]
            )
        case ast.BoolOp():
            return ast.BoolOp(op=node.op, values=[_split(v, leaves) for v in node.values])
        case ast.UnaryOp() if type(node.op) in _UNARY:
            return ast.UnaryOp(op=node.op, operand=_split(node.operand, leaves))
        case ast.BinOp() if type(node.op) in _BINARY:
            return ast.BinOp(left=_split(node.left, leaves), op=node.op, right=_split(node.right, leaves))
        case ast.Subscript() if not isinstance(node.slice, ast.Slice):
            return ast.Subscript(value=_split(node.value, leaves), slice=_split(node.slice, leaves), ctx=ast.Load())
        case ast.Call() if _name(node.func) in _FUNCTIONS and not any(isinstance(a, ast.Starred) for a in node.args):
            if all(k.arg is not None and isinstance(k.value, ast.Constant) for k in node.keywords):
                return ast.Call(
                    func=node.func,
                    args=[_split(a, leaves) for a in node.args],
                    keywords=[ast.keyword(arg=k.arg, value=_split(k.value, leaves)) for k in node.keywords],
                )
    leaves.append(ast.unparse(node))
    return ast.Name(id=f"{LEAF}{len(leaves) - 1}", ctx=ast.Load())


def _ctx(node: ast.expr) -> dict[str, Any]:
    return {"ctx": ast.Load()} if not isinstance(node, ast.Set) else {}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _evaluate(node: ast.expr, values: list[Any]) -> Any:
    """A tiny interpreter for exactly the node types :func:`_split` keeps."""
    match node:
        case ast.Constant():
            return node.value
        case ast.Name():
            value = values[int(node.id[len(LEAF) :])]
            if isinstance(value, LeafFailed):
                raise value
            return value
        case ast.List():
            return [_evaluate(e, values) for e in node.elts]
        case ast.Tuple():
            return tuple(_evaluate(e, values) for e in node.elts)
        case ast.Set():
            return {_evaluate(e, values) for e in node.elts}
        case ast.Dict():
            return {
                _evaluate(k, values): _evaluate(v, values) for k, v in zip(node.keys, node.values, strict=True) if k
            }
        case ast.Compare():
            left = _evaluate(node.left, values)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = _evaluate(comparator, values)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        case ast.BoolOp():
            result: Any = None
            for value_node in node.values:  # short-circuits like Python: an unneeded failed leaf is fine
                result = _evaluate(value_node, values)
                if isinstance(node.op, ast.And) != bool(result):
                    return result
            return result
        case ast.UnaryOp():
            return _UNARY[type(node.op)](_evaluate(node.operand, values))
        case ast.BinOp():
            left, right = _evaluate(node.left, values), _evaluate(node.right, values)
            if isinstance(node.op, ast.Mult) and _huge_repeat(left, right):
                raise LeafFailed("refusing to build a huge repeated sequence")
            return _BINARY[type(node.op)](left, right)
        case ast.Subscript():
            return _evaluate(node.value, values)[_evaluate(node.slice, values)]
        case ast.Call():
            function = _FUNCTIONS[_name(node.func) or ""]
            args = [_evaluate(a, values) for a in node.args]
            return function(*args, **{k.arg: _evaluate(k.value, values) for k in node.keywords if k.arg})
    raise TypeError(f"cannot evaluate {ast.dump(node)[:80]}")


def _huge_repeat(left: Any, right: Any) -> bool:
    for sequence, count in ((left, right), (right, left)):
        if (
            isinstance(sequence, str | bytes | list | tuple)
            and isinstance(count, int)
            and count * max(1, len(sequence)) > _MAX_REPEAT
        ):
            return True
    return False
