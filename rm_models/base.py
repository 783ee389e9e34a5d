"""What the model verifiers share: score via score_batch, per-sample preparation, chat turns.

A model verifier prepares each sample (text, token ids) on its own, so one sample that cannot be
prepared (too long, no steps) becomes that sample's error while the rest still go to the device
in one batch.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any, ClassVar, TypeVar

from rewardhub.errors import VerifierError
from rewardhub.registry import ENTRY_POINT_GROUP
from rewardhub.types import Result, Sample, ToolCall, VerifierKind
from rewardhub.verifier import Verifier

from .errors import InputTooLong

__all__ = ["ModelVerifier", "chat_turns", "check_length", "installed_verifier", "score_prepared"]

P = TypeVar("P")


class ModelVerifier(Verifier):
    """A verifier whose real work is ``score_batch``; ``score`` is a batch of one."""

    kind: ClassVar[VerifierKind] = "model"

    def score(self, sample: Sample, config: Any) -> Result | float:
        return self.score_batch([sample], config)[0]


def score_prepared(
    samples: Sequence[Sample],
    failure_score: float,
    prepare: Callable[[Sample], P | Result],
    run: Callable[[list[P]], list[Result]],
) -> list[Result]:
    """``prepare`` each sample (a :class:`Result` from it is final, a VerifierError is that
    sample's error), then ``run`` the prepared ones together and put everything back in order."""
    results: list[Result | None] = [None] * len(samples)
    ready: list[tuple[int, P]] = []
    for index, sample in enumerate(samples):
        try:
            prepared = prepare(sample)
        except VerifierError as exc:
            results[index] = Result.failed(exc.message, score=failure_score)
            continue
        if isinstance(prepared, Result):
            results[index] = prepared
        else:
            ready.append((index, prepared))
    if ready:
        for (index, _), result in zip(ready, run([p for _, p in ready]), strict=True):
            results[index] = result
    return [r for r in results if r is not None]


def chat_turns(sample: Sample, response: str | None = None, system: str | None = None) -> list[dict[str, Any]]:
    """The conversation of a sample: optional system message, the prompt's turns, then the response.

    A sample with ``messages`` is its whole conversation, tool calls (arguments as objects, as chat
    templates expect them) and tool results included, so a reward model scores the trajectory and
    not only its final text; ``response`` replaces the last assistant turn's text.
    """
    turns: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    if sample.messages is None:
        if isinstance(sample.prompt, str):
            turns.append({"role": "user", "content": sample.prompt})
        elif sample.prompt is not None:
            turns.extend({"role": m.role, "content": m.content} for m in sample.prompt)
        turns.append({"role": "assistant", "content": sample.response if response is None else response})
        return turns
    conversation = sample.conversation()
    last = max(i for i, m in enumerate(conversation) if m.role == "assistant")
    for index, message in enumerate(conversation):
        turn: dict[str, Any] = {"role": message.role, "content": message.content}
        if index == last:
            turn["content"] = sample.response if response is None else response
        if message.tool_calls:
            turn["tool_calls"] = [_template_call(call) for call in message.tool_calls]
        if message.tool_call_id is not None:
            turn["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            turn["name"] = message.name
        turns.append(turn)
    return turns


def _template_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.function.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass  # malformed arguments are shown as written
    return {"type": "function", "function": {"name": call.function.name, "arguments": arguments}}


def check_length(ids: Sequence[int], max_length: int) -> None:
    if len(ids) > max_length:
        raise InputTooLong(f"sample is {len(ids)} tokens, over max_length={max_length}")


def installed_verifier(name: str) -> Verifier:
    """An installed verifier by entry-point name, loaded alone: one broken plugin elsewhere
    does not stop a judge from consulting its rule or an evaluator from running."""
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Verifier)):
            raise VerifierError(f"entry point {name!r} is not a rewardhub Verifier")
        return cls()
    raise VerifierError(f"no verifier named {name!r} is installed")
