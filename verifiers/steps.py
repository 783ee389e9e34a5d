"""``steps``: one reward per assistant turn of a trajectory, for turn-level credit assignment.

Each assistant turn is judged by a rule verifier (``turn``: a name and its config) as if it were
the sample's final turn: the verifier sees the conversation up to and including that turn, with
the turn's text as ``response`` and its calls as the last calls. So ``tool_call`` judges each
turn's calls and ``format`` or ``regex`` each turn's text.

``reference`` is shared by every turn, or, as ``{"turns": [...]}``, given per assistant turn (one
entry each, in order: BFCL's multi-turn possible answers are one list per turn). The result's
``steps`` holds the per-turn rewards; its ``score`` aggregates them (``mean``, ``min``, ``last``
or ``sum``). A turn that cannot be judged makes the whole sample an error naming the turn: a
missing step is not a step worth 0.

Only ``rule`` verifiers can judge turns, and only those installed as entry points (built-ins and
packaged plugins): they run here, in the worker that scores the sample. Model judges and sandboxed
code see a trajectory whole, through the conversation they are given.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rewardhub.errors import VerifierError
from rewardhub.registry import ENTRY_POINT_GROUP
from rewardhub.types import OK, ChatMessage, Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig, as_result

__all__ = ["StepsVerifier", "TurnVerifier", "aggregate", "turn_samples", "turn_verifier"]

Aggregate = Literal["mean", "min", "last", "sum"]


class TurnVerifier(BaseModel):
    """The rule verifier that judges each turn, with its config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    config: dict[str, Any] = Field(default_factory=dict)


@cache
def turn_verifier(name: str) -> Verifier:
    """The installed verifier of that name, loaded alone (a broken plugin elsewhere does not matter)."""
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Verifier)):
            raise ValueError(f"entry point {name!r} is not a rewardhub Verifier")
        return cls()
    raise ValueError(f"unknown verifier {name!r}: a turn is judged by an installed rule verifier")


def aggregate(scores: list[float], how: Aggregate) -> float:
    """The sample's score from its turns' scores."""
    if how == "mean":
        return sum(scores) / len(scores)
    if how == "min":
        return min(scores)
    if how == "last":
        return scores[-1]
    return sum(scores)


def turn_samples(sample: Sample) -> list[Sample]:
    """One sample per assistant turn: the conversation up to that turn, which is its final turn."""
    conversation = sample.conversation()
    samples = []
    for end, turn in enumerate(conversation):
        if turn.role != "assistant":
            continue
        history: list[ChatMessage] = conversation[: end + 1]
        samples.append(
            Sample(id=sample.id, prompt=None, messages=history, response=turn.content, metadata=sample.metadata)
        )
    return samples


class StepsVerifier(Verifier):
    """Per-turn rewards: a rule verifier applied to each assistant turn, in ``steps``."""

    name = "steps"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        turn: TurnVerifier = Field(description="The rule verifier that judges each assistant turn, and its config.")
        aggregate: Aggregate = Field("mean", description="How the turns' rewards make the sample's score.")

        @model_validator(mode="after")
        def _a_rule_verifier(self) -> StepsVerifier.Config:
            cls = type(turn_verifier(self.turn.name))
            if cls.kind != "rule" or cls.name == "steps":
                raise ValueError(f"turns are judged by a rule verifier; {cls.name!r} is a {cls.kind} verifier")
            try:
                cls.Config.model_validate(self.turn.config)
            except ValidationError as exc:
                raise ValueError(f"invalid config for turn verifier {cls.name!r}: {exc.errors()[0]['msg']}") from None
            return self

    def score(self, sample: Sample, config: Config) -> Result:
        verifier = turn_verifier(config.turn.name)
        turn_config = verifier.Config.model_validate(config.turn.config)
        turns = turn_samples(sample)
        references = _references(sample.reference, len(turns))
        scores, details = [], []
        for index, (turn, reference) in enumerate(zip(turns, references, strict=True)):
            try:
                result = as_result(verifier.score(turn.model_copy(update={"reference": reference}), turn_config))
            except VerifierError as exc:
                raise VerifierError(f"assistant turn {index}: {exc}") from None
            if result.status != OK:
                raise VerifierError(f"assistant turn {index}: {result.status}: {result.error}")
            scores.append(result.score)
            details.append({"score": result.score, **({"details": result.details} if result.details else {})})
        return Result.ok(
            aggregate(scores, config.aggregate), steps=scores, turns=details[:50], aggregate=config.aggregate
        )


def _references(reference: Any, n_turns: int) -> list[Any]:
    if isinstance(reference, dict) and set(reference) == {"turns"}:
        per_turn = reference["turns"]
        if not isinstance(per_turn, list) or len(per_turn) != n_turns:
            got = len(per_turn) if isinstance(per_turn, list) else type(per_turn).__name__
            raise VerifierError(f"reference.turns must hold one reference per assistant turn: {n_turns}, got {got}")
        return per_turn
    return [reference] * n_turns
