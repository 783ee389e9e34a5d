"""Matching calls against a BFCL possible answer, by BFCL's rules.

A possible answer is ``[{function_name: {param: [allowed values]}}, ...]``: one entry per expected
call, each parameter with the values that count as right, ``""`` among them meaning the parameter
may be left out. ``[]`` expects no call at all. Optional function descriptions (BFCL's or OpenAI's
``{"name", "parameters": {"properties": {p: {"type"}}, "required": [...]}}``) add the declared
types and required parameters, as BFCL's checker uses them; without them the types are read from
the allowed values and every parameter without ``""`` is required.

The rules are BFCL's AST checker's, for Python:

- a missing required parameter, an unexpected parameter (not in the possible answer, or not in the
  description), a wrong type and a value not allowed each fail the call;
- an int is accepted where a float is declared (or allowed), but not as an item of a declared
  list of floats (BFCL checks item types strictly); a bool is never a number;
- strings compare after BFCL's normalisation (spaces and ``,./-_*^`` removed, lower case, ``'``
  as ``"``), also inside lists and dict values; lists element by element in order; dicts key by
  key, each value among its allowed values, a key whose allowed values hold ``""`` optional;
- parallel calls match in any order, every expected call to a different call, and the count
  must be equal. Where BFCL matches greedily (the first call that fits), this finds a full
  matching whenever one exists: the two differ only when a greedy choice blocks a later call.

Everything here is a pure function of plain values; the verifier says where the calls came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .call_reading import ParsedCall

__all__ = [
    "Expected",
    "Mismatch",
    "match_call",
    "match_calls",
    "parse_functions",
    "parse_possible_answer",
    "standardize",
]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": object,
}
_STANDARDIZE = re.compile(r"[ \,\.\/\-\_\*\^]")


@dataclass(frozen=True)
class Expected:
    """One expected call: the function and its parameters' allowed values, with the description if given."""

    name: str
    allowed: dict[str, list[Any]]
    types: dict[str, str] = field(default_factory=dict)  # declared type names, when described
    item_types: dict[str, str] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    described: frozenset[str] | None = None  # the description's parameters; None: not described


@dataclass(frozen=True)
class Mismatch:
    """Why a call does not match: a short code (for counting) and a sentence (for reading)."""

    code: str
    message: str


def standardize(text: str) -> str:
    """BFCL's string normalisation: ``April 1, 2024`` and ``april 1,2024`` are the same answer."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def parse_possible_answer(reference: Any, functions: list[dict[str, Any]] | None = None) -> list[Expected]:
    """The expected calls of a possible answer; raises ValueError naming what is malformed."""
    if not isinstance(reference, list):
        raise ValueError("a possible answer is a list of {function_name: {param: [allowed values]}}")
    described = {f["name"]: f for f in functions or []}
    expected = []
    for index, entry in enumerate(reference):
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ValueError(f"possible answer {index} must be one {{function_name: {{param: [values]}}}}")
        ((name, params),) = entry.items()
        if not isinstance(params, dict):
            raise ValueError(f"possible answer {index} ({name}): parameters must be an object")
        for param, values in params.items():
            if not isinstance(values, list):
                raise ValueError(f"possible answer {index} ({name}): {param!r} must list its allowed values")
        expected.append(_with_description(str(name), {str(k): list(v) for k, v in params.items()}, described.get(name)))
    return expected


def parse_functions(functions: Any) -> list[dict[str, Any]]:
    """Function descriptions as ``{"name", "properties", "required"}``, from BFCL's or OpenAI's shape."""
    if functions is None:
        return []
    if not isinstance(functions, list):
        raise ValueError("functions must be a list of function descriptions")
    out = []
    for index, function in enumerate(functions):
        if isinstance(function, dict) and isinstance(function.get("function"), dict):
            function = function["function"]
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError(f"function {index} has no name")
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        if not isinstance(properties, dict) or not all(isinstance(p, dict) for p in properties.values()):
            raise ValueError(f"function {function['name']!r}: parameters.properties must map names to schemas")
        out.append(
            {
                "name": function["name"],
                "properties": dict(properties),
                "required": list(parameters.get("required") or []),
            }
        )
    return out


def _with_description(name: str, allowed: dict[str, list[Any]], function: dict[str, Any] | None) -> Expected:
    if function is None:
        return Expected(name, allowed)
    properties = function["properties"]
    types = {p: str(s.get("type", "any")) for p, s in properties.items()}
    unknown = [t for t in types.values() if t not in _PYTHON_TYPES]
    if unknown:
        raise ValueError(f"function {name!r}: unknown parameter type {unknown[0]!r}")
    item_types = {
        p: str(s["items"].get("type", "any")) for p, s in properties.items() if isinstance(s.get("items"), dict)
    }
    return Expected(name, allowed, types, item_types, frozenset(function["required"]), frozenset(properties))


def match_calls(calls: list[ParsedCall], expected: list[Expected]) -> tuple[list[int | None], list[Mismatch]]:
    """Match each expected call to a different call, in any order.

    Returns, per expected call, the index of the call matched to it (None: none could be), and the
    mismatches that explain a failure: a count that differs, or, for each unmatched expected call,
    why its closest candidate (one with the right name, if any) does not fit.
    """
    fits = [[match_call(call, want) for call in calls] for want in expected]
    assignment = _full_matching([[m is None for m in row] for row in fits], len(calls))
    problems: list[Mismatch] = []
    if len(calls) > len(expected):
        problems.append(Mismatch("extra_call", f"{len(calls)} calls made, {len(expected)} expected"))
    elif len(calls) < len(expected):
        problems.append(Mismatch("missing_call", f"{len(calls)} calls made, {len(expected)} expected"))
    for want, row, got in zip(expected, fits, assignment, strict=True):
        if got is None:
            named = [m for call, m in zip(calls, row, strict=True) if call.name == want.name and m is not None]
            problems.append(named[0] if named else Mismatch("missing_call", f"no call of {want.name!r}"))
    return assignment, problems


def _full_matching(ok: list[list[bool]], n_calls: int) -> list[int | None]:
    """A maximum matching of expected calls to calls (augmenting paths; a handful of calls each side)."""
    owner: list[int | None] = [None] * n_calls

    def place(i: int, seen: set[int]) -> bool:
        for j in range(n_calls):
            if ok[i][j] and j not in seen:
                seen.add(j)
                if owner[j] is None or place(owner[j], seen):  # type: ignore[arg-type]
                    owner[j] = i
                    return True
        return False

    for i in range(len(ok)):
        place(i, set())
    assignment: list[int | None] = [None] * len(ok)
    for j, i in enumerate(owner):
        if i is not None:
            assignment[i] = j
    return assignment


def match_call(call: ParsedCall, want: Expected) -> Mismatch | None:
    """None when the call fits the expected one, else why not (BFCL's checks, in BFCL's order)."""
    if call.name != want.name:
        return Mismatch("wrong_name", f"called {call.name!r}, expected {want.name!r}")
    if call.arguments is None:
        return Mismatch("malformed_arguments", call.problem or "arguments could not be read")
    for param in sorted(want.required):
        if param not in call.arguments:
            return Mismatch("missing_required", f"missing required parameter {param!r}")
    for param, value in call.arguments.items():
        if param not in want.allowed or (want.described is not None and param not in want.described):
            return Mismatch("unexpected_param", f"unexpected parameter {param!r}")
        problem = _check_value(param, value, want)
        if problem is not None:
            return problem
    for param, values in want.allowed.items():
        if param not in call.arguments and "" not in values:
            return Mismatch("missing_required", f"parameter {param!r} not given and not optional")
    return None


def _check_value(param: str, value: Any, want: Expected) -> Mismatch | None:
    allowed = want.allowed[param]
    declared = want.types.get(param) or _type_name(next((v for v in allowed if v != ""), None))
    if declared in ("float", "number") and type(value) is int:
        value = float(value)  # BFCL: an int is accepted for a float
    expected_type = _PYTHON_TYPES.get(declared or "any", object)
    if expected_type is not object and type(value) is not expected_type:
        return Mismatch("type_error", f"{param!r} should be {declared}, got {type(value).__name__} {value!r}")
    item_type = want.item_types.get(param)
    if item_type in _PYTHON_TYPES and _PYTHON_TYPES[item_type] is not object and isinstance(value, list):
        # as in BFCL, the int-for-float allowance is the parameter's, not its items': [1, 2.5] is not a list of floats
        wrong = [v for v in value if type(v) is not _PYTHON_TYPES[item_type]]
        if wrong:
            return Mismatch("type_error", f"{param!r} should hold {item_type} items, got {wrong[0]!r}")
    if not _allowed(value, allowed, item_type):
        shown = [v for v in allowed if v != ""]
        return Mismatch("value_error", f"{param!r} is {value!r}, expected one of {shown}")
    return None


def _type_name(value: Any) -> str | None:
    if value is None:
        return None
    for name in ("boolean", "integer", "float", "string", "array", "dict"):
        if type(value) is _PYTHON_TYPES[name]:
            return name
    return None


def _allowed(value: Any, allowed: list[Any], item_type: str | None) -> bool:
    candidates = [v for v in allowed if v != ""]
    if isinstance(value, dict):
        return any(isinstance(c, dict) and _dict_fits(value, c) for c in candidates)
    if isinstance(value, list) and (item_type in ("dict", "object") or (value and isinstance(value[0], dict))):
        return any(isinstance(c, list) and _dict_list_fits(value, c) for c in candidates)
    if isinstance(value, str):
        return standardize(value) in [standardize(c) for c in candidates if isinstance(c, str)]
    if isinstance(value, list):
        mine = _standard_list(value)
        return any(isinstance(c, list) and _standard_list(c) == mine for c in candidates)
    return any(_same_scalar(value, c) for c in candidates)


def _standard_list(values: list[Any]) -> list[Any]:
    return [standardize(v) if isinstance(v, str) else v for v in values]


def _same_scalar(value: Any, candidate: Any) -> bool:
    if isinstance(value, bool) or isinstance(candidate, bool):
        return type(value) is type(candidate) and value == candidate
    return value == candidate


def _dict_fits(value: dict[str, Any], allowed: dict[str, Any]) -> bool:
    """BFCL's dict rule: each key expected, its value among the key's allowed values; keys without ``""`` present."""
    for key, item in value.items():
        if key not in allowed or not isinstance(allowed[key], list):
            return False
        options = [standardize(v) if isinstance(v, str) else v for v in allowed[key]]
        if (standardize(item) if isinstance(item, str) else item) not in options:
            return False
    return all(key in value or "" in options for key, options in allowed.items() if isinstance(options, list))


def _dict_list_fits(value: list[Any], allowed: list[Any]) -> bool:
    return len(value) == len(allowed) and all(
        isinstance(v, dict) and isinstance(a, dict) and _dict_fits(v, a) for v, a in zip(value, allowed, strict=True)
    )
