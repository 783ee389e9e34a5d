"""Composition is pure: leaf results in, one result with a breakdown out."""

from __future__ import annotations

import pytest

from rewardhub.compose import combine, leaves, resolve
from rewardhub.errors import InvalidRequest
from rewardhub.registry import Registry
from rewardhub.types import Result

REGISTRY = Registry.load()


def results_for(node, scores: dict[str, Result]):
    return {leaf.key: scores[leaf.name] for leaf in leaves(node)}


def test_identical_leaves_are_scored_once():
    node = resolve({"sum": [{"verifier": "exact", "weight": 1}, {"verifier": "exact", "weight": 2}]}, REGISTRY)
    assert len(leaves(node)) == 1


def test_a_tree_knows_its_distinct_leaves_in_first_seen_order():
    """Listed once, as the tree is built: the gate's leaves before its then's, a sum's terms in order,
    a leaf named twice once (the pipeline and the scorer read ``node.leaves`` for every request)."""
    spec = {
        "gate": "exact",
        "then": {
            "sum": [{"verifier": "length"}, {"verifier": "exact"}, {"verifier": {"gate": "format", "then": "f1"}}]
        },
    }
    node = resolve(spec, REGISTRY)
    assert [leaf.name for leaf in node.leaves] == ["exact", "length", "format", "f1"]
    assert leaves(node) == list(node.leaves)
    [leaf] = resolve("exact", REGISTRY).leaves
    assert leaf.name == "exact"
    assert node == resolve(spec, REGISTRY)  # the list is not part of a node's identity


def test_weighted_sum_with_scale_and_clip_by_hand():
    node = resolve(
        {
            "sum": [{"verifier": "exact", "weight": 2}, {"verifier": "length", "weight": 1}],
            "scale": 0.5,
            "clip": [-1, 0.8],
        },
        REGISTRY,
    )
    out = combine(node, results_for(node, {"exact": Result.ok(1.0), "length": Result.ok(-0.5)}))
    assert out.score == pytest.approx(0.75)  # 0.5 * (2*1 - 0.5) = 0.75, inside the clip
    out = combine(node, results_for(node, {"exact": Result.ok(1.0), "length": Result.ok(0.0)}))
    assert out.score == pytest.approx(0.8)  # 1.0 clipped to 0.8


def test_a_failed_component_makes_the_sum_not_ok():
    node = resolve({"sum": [{"verifier": "exact"}, {"verifier": "length"}]}, REGISTRY)
    out = combine(node, results_for(node, {"exact": Result.ok(1.0), "length": Result.failed("boom", status="timeout")}))
    assert out.status == "timeout" and out.error == "boom"
    assert out.details["components"]["length"]["status"] == "timeout"


def test_gate_closed_open_and_undecided():
    node = resolve({"gate": "format", "then": "exact", "otherwise": -1.0}, REGISTRY)
    closed = combine(node, results_for(node, {"format": Result.ok(0.0), "exact": Result.ok(1.0)}))
    opened = combine(node, results_for(node, {"format": Result.ok(1.0), "exact": Result.ok(1.0)}))
    undecided = combine(node, results_for(node, {"format": Result.failed("x"), "exact": Result.ok(1.0)}))
    assert (closed.score, opened.score, undecided.status) == (-1.0, 1.0, "error")


def test_dense_steps_add_elementwise():
    node = resolve({"sum": [{"verifier": "exact", "weight": 1}, {"verifier": "length", "weight": 2}]}, REGISTRY)
    out = combine(
        node, results_for(node, {"exact": Result.ok(1.0, steps=[1.0, 0.0]), "length": Result.ok(0.0, steps=[0.5, 0.5])})
    )
    assert out.steps == [2.0, 1.0]


def test_specs_nested_too_deep_are_refused():
    spec: dict | str = "exact"
    for _ in range(12):
        spec = {"sum": [{"verifier": spec}]}
    with pytest.raises(InvalidRequest):
        resolve(spec, REGISTRY)
