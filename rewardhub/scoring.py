"""The scoring pipeline: samples and specs in, one result per sample out.

Used by the service's one score path (:mod:`rewardhub.api.pipeline`, which adds admission and
metrics around it), by ``rewardhub score`` and by the Celery mode alike:

1. resolve each sample's spec (its own, else the request's) into a tree, validating configs;
2. turn the distinct leaves into calls: one per (sample, leaf) for per-sample verifiers;
3. run them on the executor;
4. escalate: a leaf whose config names ``escalate_to`` and that judged a sample wrong sends that
   sample to the named verifier (TinyV's add-on mode: a model judge consulted only when the rule
   says no);
5. run group verifiers over all samples sharing a ``group``, after the per-sample ones;
6. combine the leaves of each sample's tree into its result.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from rewardhub.calls import Call
from rewardhub.compose import Leaf, Node, combine, leaves, resolve
from rewardhub.errors import InvalidRequest, RewardhubError
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import OK, Result, Sample, VerifierKind, VerifierSpec

__all__ = ["Scorer"]

MAX_RESOLVED = 1024  # distinct specs remembered; past this the memory starts over


class Scorer:
    def __init__(self, registry: Registry, executor: Executor, settings: Settings) -> None:
        self.registry = registry
        self.executor = executor
        self.settings = settings
        self._leaf_info: dict[str, tuple[VerifierKind, float]] = {}
        # Resolved trees by canonical spec: the registry does not change while we serve, and a
        # trainer sends the same few specs all day (a one-sample request resolved its spec anew,
        # validating the config and hashing it, every time).
        self._resolved: dict[str, Node] = {}
        # Each leaf's escalation target (None: it has none), by leaf key: looked up once per leaf,
        # not once per sample (a 10,000-sample batch asked pydantic for the config's fields 10,000 times).
        self._escalations: dict[str, Node | None] = {}

    def plan(self, samples: Sequence[Sample], default: VerifierSpec | None) -> list[Node]:
        """Each sample's resolved tree; a bad spec fails the request (422/404) before any work."""
        cache = self._resolved
        if len(cache) > MAX_RESOLVED:  # per-leaf memories are keyed by specs' leaves: they start over too
            cache.clear()
            self._leaf_info.clear()
            self._escalations.clear()
        nodes = []
        for index, sample in enumerate(samples):
            spec = sample.verifier if sample.verifier is not None else default
            if spec is None:
                raise InvalidRequest(f"sample {index} names no verifier and the request has no default")
            key = _spec_key(spec)
            node = cache.get(key)
            if node is None:
                try:
                    node = cache[key] = resolve(spec, self.registry)
                except RewardhubError as exc:
                    exc.detail = {"sample_index": index, "errors": exc.detail}
                    raise
            nodes.append(node)
        return nodes

    async def score(
        self,
        samples: Sequence[Sample],
        default: VerifierSpec | None = None,
        nodes: Sequence[Node] | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[Result]:
        nodes = list(nodes) if nodes is not None else self.plan(samples, default)
        leaf_results: list[dict[str, Result]] = [{} for _ in samples]

        # A batch usually shares one or a few trees: work out leaves, kinds and limits once per tree.
        per_node: dict[int, tuple[list[Leaf], list[Leaf]]] = {}  # (per-sample leaves, group leaves)
        for node in nodes:
            if id(node) not in per_node:
                found = leaves(node)
                per_node[id(node)] = (
                    [leaf for leaf in found if not self._is_group(leaf)],
                    [leaf for leaf in found if self._is_group(leaf)],
                )
        per_sample = [(i, leaf) for i, node in enumerate(nodes) for leaf in per_node[id(node)][0]]
        calls = [self._call(leaf, (samples[i],)) for i, leaf in per_sample]
        for (i, leaf), results in zip(per_sample, await self.executor.run(calls, on_progress), strict=True):
            leaf_results[i][leaf.key] = results[0]

        distinct = {leaf.key: leaf for per_sample_leaves, _ in per_node.values() for leaf in per_sample_leaves}
        await self._escalate(samples, per_sample, distinct.values(), leaf_results)
        await self._score_groups(samples, [per_node[id(node)][1] for node in nodes], leaf_results)

        out = []
        for i, (sample, node) in enumerate(zip(samples, nodes, strict=True)):
            if isinstance(node, Leaf):  # the common case: the leaf's result is whole (its id and time set)
                result = leaf_results[i][node.key]
                if result.id != sample.id:
                    result = result.model_copy(update={"id": sample.id})
            else:
                result = combine(node, leaf_results[i])
                elapsed = round(sum(r.elapsed_ms for r in leaf_results[i].values()), 3)
                if result.id != sample.id or result.elapsed_ms != elapsed:
                    result = result.model_copy(update={"id": sample.id, "elapsed_ms": elapsed})
            out.append(result)
        return out

    def _escalation(self, leaf: Leaf) -> Node | None:
        """The tree ``leaf``'s config escalates to, if any (resolved once per leaf)."""
        if leaf.key not in self._escalations:
            target = getattr(leaf.config, "escalate_to", None)
            self._escalations[leaf.key] = resolve(target, self.registry) if target is not None else None
        return self._escalations[leaf.key]

    async def _escalate(
        self,
        samples: Sequence[Sample],
        per_sample: list[tuple[int, Leaf]],
        distinct: Iterable[Leaf],
        leaf_results: list[dict[str, Result]],
    ) -> None:
        targets = {leaf.key: node for leaf in distinct if (node := self._escalation(leaf)) is not None}
        if not targets:
            return
        wanted = []
        for i, leaf in per_sample:
            result = leaf_results[i][leaf.key]
            if leaf.key in targets and result.status == OK and result.score < 1.0:
                wanted.append((i, leaf, targets[leaf.key]))
        if not wanted:
            return
        judge_calls = []
        for i, _, node in wanted:
            if not isinstance(node, Leaf):
                raise InvalidRequest("escalate_to must name a single verifier")
            judge_calls.append(self._call(node, (samples[i],)))
        for (i, leaf, _), results in zip(wanted, await self.executor.run(judge_calls), strict=True):
            rule, judge = leaf_results[i][leaf.key], results[0]
            details = {
                **rule.details,
                "rule": {"score": rule.score, "status": rule.status},
                "escalation": judge.model_dump(exclude={"id"}),
            }
            if judge.status == OK:
                merged = rule.model_copy(update={"score": max(rule.score, judge.score), "details": details})
            else:  # the judge could not decide: the rule's verdict stands, and says so
                merged = rule.model_copy(update={"details": details})
            leaf_results[i][leaf.key] = merged

    async def _score_groups(
        self, samples: Sequence[Sample], group_leaves_of: Sequence[list[Leaf]], leaf_results: list[dict[str, Result]]
    ) -> None:
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        group_leaves: dict[str, Leaf] = {}
        for i, sample_leaves in enumerate(group_leaves_of):
            for leaf in sample_leaves:
                group_key = samples[i].group if samples[i].group is not None else f"__sample_{i}"
                groups[(leaf.key, group_key)].append(i)
                group_leaves[leaf.key] = leaf
        if not groups:
            return
        keys = list(groups)
        calls = [
            self._call(group_leaves[leaf_key], tuple(samples[i] for i in groups[(leaf_key, g)])) for leaf_key, g in keys
        ]
        for (leaf_key, g), results in zip(keys, await self.executor.run(calls), strict=True):
            for i, result in zip(groups[(leaf_key, g)], results, strict=True):
                leaf_results[i][leaf_key] = result

    def _is_group(self, leaf: Leaf) -> bool:
        return self.registry.verifier_class(leaf.name).kind == "group"

    def _call(self, leaf: Leaf, samples: tuple[Sample, ...]) -> Call:
        kind, timeout_s = self._kind_and_timeout(leaf)
        return Call(leaf.name, leaf.config, samples, kind, timeout_s)

    def _kind_and_timeout(self, leaf: Leaf) -> tuple[VerifierKind, float]:
        known = self._leaf_info.get(leaf.key)
        if known is None:
            kind = self.registry.verifier_class(leaf.name).kind
            known = self._leaf_info[leaf.key] = (kind, self._timeout(kind, leaf))
        return known

    def _timeout(self, kind: str, leaf: Leaf) -> float:
        default = {
            "code": self.settings.code_timeout_s,
            "model": self.settings.model_timeout_s,
            "judge": self.settings.model_timeout_s,
        }
        requested = leaf.config.timeout_s or default.get(kind, self.settings.sample_timeout_s)
        return min(requested, self.settings.max_timeout_s)


def _spec_key(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if hasattr(spec, "model_dump"):
        return json.dumps(spec.model_dump(mode="json"), sort_keys=True)
    return json.dumps(spec, sort_keys=True, default=str)
