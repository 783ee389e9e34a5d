"""Reward composition: resolve a VerifierSpec into a tree, list its leaves, combine their results.

A request names verifiers as a string, a ``{"name", "config"}`` reference, a weighted
``{"sum": [...]}`` or a ``{"gate": ..., "then": ...}``. :func:`resolve` validates every config
up front (a bad config is a 422 before any work starts) and returns a tree of frozen nodes, each
:class:`Leaf` carrying its verifier's :class:`~rewardhub.registry.VerifierTraits`, asked of the
registry there and nowhere after. Every node knows its distinct leaves (``node.leaves``, listed
once, as the tree is built): the score pipeline reads them to see who reads the caller and the
scorer to split per-sample from group leaves, so neither walks a tree again for each request. The
execution layer scores each distinct leaf once; :func:`combine` folds the leaf
results back into one :class:`~rewardhub.types.Result` with the per-component breakdown in
``details["components"]``. Combination is pure: no I/O, no registry.

A component that could not judge (timeout, error) makes the composite non-``ok``: a sum with a
missing term is not a smaller reward, it is no reward.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from rewardhub.errors import InvalidRequest
from rewardhub.registry import Registry, Timeouts, VerifierTraits
from rewardhub.types import OK, Gate, Result, VerifierRef, VerifierSpec, WeightedSum
from rewardhub.verifier import VerifierConfig

__all__ = ["GateNode", "Leaf", "Node", "SumNode", "combine", "leaves", "resolve"]

MAX_DEPTH = 8
MAX_LEAVES = 32


@dataclass(frozen=True)
class Leaf:
    name: str
    config: VerifierConfig
    key: str  # name + canonical config: identical leaves are scored once
    traits: VerifierTraits  # what the service needs to know about the verifier with this config
    leaves: tuple[Leaf, ...] = field(init=False, repr=False, compare=False)
    """Itself: every node has its distinct leaves to hand, a leaf too."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "leaves", (self,))


@dataclass(frozen=True)
class SumNode:
    terms: tuple[tuple[Node, float], ...]
    clip: tuple[float, float] | None
    scale: float
    leaves: tuple[Leaf, ...] = field(init=False, repr=False, compare=False)
    """Distinct leaves, in first-seen order (listed when the node is built)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "leaves", _distinct(term for term, _ in self.terms))


@dataclass(frozen=True)
class GateNode:
    gate: Node
    then: Node
    threshold: float
    otherwise: float
    leaves: tuple[Leaf, ...] = field(init=False, repr=False, compare=False)
    """Distinct leaves, the gate's first (listed when the node is built)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "leaves", _distinct((self.gate, self.then)))


Node = Leaf | SumNode | GateNode


def resolve(
    spec: VerifierSpec | Mapping[str, Any], registry: Registry, timeouts: Timeouts = Timeouts(), depth: int = 0
) -> Node:
    """Validate a spec against the registry and build its tree; ``timeouts``: the service's limits."""
    if depth > MAX_DEPTH:
        raise InvalidRequest(f"verifier spec nested deeper than {MAX_DEPTH} levels")
    if isinstance(spec, Mapping):
        spec = _parse_spec(spec)
    if isinstance(spec, str):
        spec = VerifierRef(name=spec)
    if isinstance(spec, VerifierRef):
        config = registry.validate_config(spec.name, spec.config)
        return Leaf(spec.name, config, _leaf_key(spec.name, config), registry.traits(spec.name, config, timeouts))
    if isinstance(spec, WeightedSum):
        terms = tuple((resolve(term.verifier, registry, timeouts, depth + 1), term.weight) for term in spec.sum)
        node: Node = SumNode(terms, spec.clip, spec.scale)
    elif isinstance(spec, Gate):
        node = GateNode(
            resolve(spec.gate, registry, timeouts, depth + 1),
            resolve(spec.then, registry, timeouts, depth + 1),
            spec.threshold,
            spec.otherwise,
        )
    else:
        raise InvalidRequest(f"not a verifier spec: {spec!r}")
    if depth == 0 and len(node.leaves) > MAX_LEAVES:
        raise InvalidRequest(f"a composite verifier may have at most {MAX_LEAVES} leaves")
    return node


def leaves(node: Node) -> list[Leaf]:
    """Distinct leaves of a tree, in first-seen order (``node.leaves``, as a list)."""
    return list(node.leaves)


def _distinct(parts: Iterable[Node]) -> tuple[Leaf, ...]:
    """The distinct leaves of ``parts``, in first-seen order: a leaf named twice is scored once."""
    found: dict[str, Leaf] = {}
    for part in parts:
        for leaf in part.leaves:
            found.setdefault(leaf.key, leaf)
    return tuple(found.values())


def combine(node: Node, results: Mapping[str, Result]) -> Result:
    """Fold leaf results (by leaf key) into the node's result."""
    if isinstance(node, Leaf):
        return results[node.key]
    if isinstance(node, SumNode):
        return _combine_sum(node, results)
    return _combine_gate(node, results)


def _combine_sum(node: SumNode, results: Mapping[str, Result]) -> Result:
    parts = [(combine(term, results), weight, _label(term)) for term, weight in node.terms]
    total = node.scale * sum(weight * part.score for part, weight, _ in parts)
    if node.clip is not None:
        total = min(max(total, node.clip[0]), node.clip[1])
    components = _components([(label, part, weight) for part, weight, label in parts])
    failed = next((part for part, _, _ in parts if part.status != OK), None)
    if failed is not None:
        return Result(score=total, status=failed.status, error=failed.error, details={"components": components})
    steps = _sum_steps([(part, weight * node.scale) for part, weight, _ in parts])
    return Result(score=total, steps=steps, details={"components": components})


def _combine_gate(node: GateNode, results: Mapping[str, Result]) -> Result:
    gate, then = combine(node.gate, results), combine(node.then, results)
    components = _components([(_label(node.gate), gate, None), (_label(node.then), then, None)])
    if gate.status != OK:
        return Result(
            score=gate.score, status=gate.status, error=gate.error, details={"components": components, "gate": "error"}
        )
    if gate.score < node.threshold:
        return Result(score=node.otherwise, details={"components": components, "gate": "closed"})
    return Result(
        score=then.score,
        status=then.status,
        error=then.error,
        steps=then.steps,
        details={"components": components, "gate": "open"},
    )


def _components(parts: list[tuple[str, Result, float | None]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, part, weight in parts:
        key, n = label, 2
        while key in out:
            key, n = f"{label}#{n}", n + 1
        entry: dict[str, Any] = {"score": part.score, "status": part.status, "details": part.details}
        if weight is not None:
            entry["weight"] = weight
        if part.error:
            entry["error"] = part.error
        out[key] = entry
    return out


def _sum_steps(parts: list[tuple[Result, float]]) -> list[float] | None:
    """Dense rewards add element-wise when every dense part has the same length."""
    dense = [(part.steps, weight) for part, weight in parts if part.steps is not None]
    if not dense or len({len(steps) for steps, _ in dense}) != 1:
        return None
    return [sum(weight * steps[i] for steps, weight in dense) for i in range(len(dense[0][0]))]


def _label(node: Node) -> str:
    if isinstance(node, Leaf):
        return node.name
    return "sum" if isinstance(node, SumNode) else "gate"


def _leaf_key(name: str, config: VerifierConfig) -> str:
    return name + ":" + json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def _parse_spec(raw: Mapping[str, Any]) -> VerifierSpec:
    model: type[BaseModel]
    if "sum" in raw:
        model = WeightedSum
    elif "gate" in raw:
        model = Gate
    else:
        model = VerifierRef
    try:
        return model.model_validate(raw)  # type: ignore[return-value]
    except ValidationError as exc:
        raise InvalidRequest(
            "invalid verifier spec", detail=exc.errors(include_url=False, include_context=False)
        ) from None
