"""The instruction registry: an instruction id, the kwargs it takes, and the rule that checks it.

A rule is a pure function ``rule(text, **kwargs) -> Verdict``, registered with :func:`instruction`
under the id datasets send ("keywords:frequency"). Its signature is its kwargs schema: the
annotations are validated (pydantic, unknown kwargs refused), and a parameter without a default
is required. Google's checkers, and the IFEvalG and IFBench checkers after them, pick a *random*
value for a kwarg that is missing; a random instruction is no judgement, so here a missing kwarg
is an ``error`` naming it. The dataset's ``null`` kwargs are dropped first, as every reference does.

``relation`` kwargs take IFEval's two words: "less than" (count < N) and "at least" (count >= N).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from rewardhub.errors import VerifierError

from .constraints import Verdict

__all__ = ["RULES", "Count", "Relation", "Rule", "Text", "Words", "bind", "compare", "instruction"]

Relation = Literal["less than", "at least"]
# The references draw a random value for a negative count, an empty word or an empty list: refused here.
Count = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]
Words = Annotated[list[str], Field(min_length=1)]


def compare(count: int, relation: str, threshold: int) -> bool:
    return count < threshold if relation == "less than" else count >= threshold


@dataclass(frozen=True)
class Rule:
    id: str
    family: str  # "IFEval", "IFEvalG" or "IFBench": whose checker this rule reproduces
    check: Callable[..., Verdict]
    schema: type[BaseModel]


RULES: dict[str, Rule] = {}


def instruction(instruction_id: str, family: str) -> Callable[[Callable[..., Verdict]], Callable[..., Verdict]]:
    """Register ``fn`` as the rule for ``instruction_id`` (its parameters after ``text`` are the kwargs)."""

    def register(fn: Callable[..., Verdict]) -> Callable[..., Verdict]:
        if instruction_id in RULES:
            raise ValueError(f"instruction {instruction_id!r} registered twice")
        fields: dict[str, Any] = {}
        for name, param in list(inspect.signature(fn, eval_str=True).parameters.items())[1:]:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (param.annotation, default)
        schema = create_model(  # type: ignore[call-overload]
            f"Kwargs_{fn.__name__}", __config__=ConfigDict(extra="forbid", frozen=True), **fields
        )
        RULES[instruction_id] = Rule(instruction_id, family, fn, schema)
        return fn

    return register


def bind(instruction_id: str, kwargs: Any) -> Callable[[str], Verdict]:
    """The check for one instruction of a row, its kwargs validated; :class:`VerifierError` if unusable."""
    rule = RULES.get(instruction_id)
    if rule is None:
        raise VerifierError(f"instruction {instruction_id!r} has no counterpart in ifeval")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict):
        raise VerifierError(f"instruction {instruction_id!r}: kwargs must be an object, got {type(kwargs).__name__}")
    given = {key: value for key, value in kwargs.items() if value is not None}
    try:
        values = rule.schema.model_validate(given)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "kwargs"
        message = first["msg"]
        if first["type"] == "missing":
            message = "missing (the reference checker would pick one at random)"
        raise VerifierError(f"instruction {instruction_id!r}: kwarg {where}: {message}") from None
    bound = dict(values)
    check = rule.check

    def run(text: str) -> Verdict:
        return check(text, **bound)

    return run
