"""``tool_sequence``: the tools a trajectory called, against rules on which, in what order and how many.

The calls are read from every assistant turn in order (structured ``tool_calls``, else the calls
written in the text: see :mod:`rewardhub.verifiers.call_reading`). The rules:

- ``required``: each of these tools is called at least once;
- ``forbidden``: none of these is ever called;
- ``order``: these tools are called in this order (a subsequence of the calls: other calls may
  come between, and a tool listed twice must be called twice);
- ``max_calls`` / ``min_calls``: the call budget, counting every call, malformed ones included.

Rules come from the config (the same for every sample) and from the ``reference`` (per sample,
``{"required": [...], ...}``), the reference's winning where both give one. The score is 1 when
every rule given holds, else 0; with ``partial_credit``, the share of rules that hold. Each broken
rule is listed in ``details.violations``. It judges which tools were called, not their arguments
(that is ``tool_call``'s work) nor what the tools returned.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .call_reading import calls_in_turn

__all__ = ["SequenceRules", "ToolSequenceVerifier", "violations"]


class SequenceRules(BaseModel):
    """The rules; a field left out is not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required: list[str] | None = Field(None, description="Tools that must each be called at least once.")
    forbidden: list[str] | None = Field(None, description="Tools that must never be called.")
    order: list[str] | None = Field(None, description="Tools that must be called in this order (other calls between).")
    max_calls: int | None = Field(None, ge=0, description="Most calls allowed in the whole trajectory.")
    min_calls: int | None = Field(None, ge=0, description="Fewest calls required in the whole trajectory.")


def violations(called: list[str | None], rules: SequenceRules) -> tuple[int, list[dict[str, Any]]]:
    """How many rules were checked, and each broken one with the evidence."""
    checked, broken = 0, []
    if rules.required is not None:
        checked += 1
        missing = [name for name in rules.required if name not in called]
        if missing:
            broken.append({"rule": "required", "missing": missing})
    if rules.forbidden is not None:
        checked += 1
        used = sorted({name for name in called if name in rules.forbidden})
        if used:
            broken.append({"rule": "forbidden", "called": used})
    if rules.order is not None:
        checked += 1
        done = _subsequence_prefix(rules.order, called)
        if done < len(rules.order):
            broken.append({"rule": "order", "expected": rules.order, "first_out_of_order": rules.order[done]})
    if rules.max_calls is not None:
        checked += 1
        if len(called) > rules.max_calls:
            broken.append({"rule": "max_calls", "calls": len(called), "limit": rules.max_calls})
    if rules.min_calls is not None:
        checked += 1
        if len(called) < rules.min_calls:
            broken.append({"rule": "min_calls", "calls": len(called), "limit": rules.min_calls})
    return checked, broken


def _subsequence_prefix(order: list[str], called: list[str | None]) -> int:
    """How many of ``order``'s tools were called in that order."""
    done = 0
    for name in called:
        if done < len(order) and name == order[done]:
            done += 1
    return done


class ToolSequenceVerifier(Verifier):
    """Required and forbidden tools, their order and the call budget, over a whole trajectory."""

    name = "tool_sequence"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig, SequenceRules):
        partial_credit: bool = Field(False, description="Score the share of rules that hold instead of all or nothing.")

    def score(self, sample: Sample, config: Config) -> Result:
        rules = _rules(config, sample.reference)
        called = [call.name for turn in sample.assistant_turns() for call in calls_in_turn(turn)]
        checked, broken = violations(called, rules)
        if checked == 0:
            raise VerifierError("no rule to check: give required, forbidden, order, max_calls or min_calls")
        score = (checked - len(broken)) / checked if config.partial_credit else float(not broken)
        return Result.ok(score, calls=called[:100], n_calls=len(called), rules_checked=checked, violations=broken)


def _rules(config: ToolSequenceVerifier.Config, reference: Any) -> SequenceRules:
    base = SequenceRules.model_validate(config.model_dump(include=set(SequenceRules.model_fields)))
    if reference is None:
        return base
    if not isinstance(reference, dict):
        raise VerifierError("reference must be an object of rules: {required, forbidden, order, max_calls, min_calls}")
    try:
        given = SequenceRules.model_validate(reference)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise VerifierError(f"malformed tool_sequence reference at {first['loc']}: {first['msg']}") from None
    return base.model_copy(update=given.model_dump(exclude_unset=True))
