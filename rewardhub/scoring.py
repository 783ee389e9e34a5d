"""The scoring pipeline: samples and specs in, one result per sample out.

Used by the service's one score path (:mod:`rewardhub.api.pipeline`, which adds admission and
metrics around it), by ``rewardhub score`` and by the Celery mode alike:

1. resolve each sample's spec (its own, else the request's) into a tree, validating configs and
   asking the registry, once per distinct spec, for each leaf's traits (kind, inline, time limit,
   what it reads, cacheable, verdict key; :class:`~rewardhub.registry.VerifierTraits`), which every
   later step reads off the leaf and its calls;
2. turn the distinct leaves into calls: one per (sample, leaf) for per-sample verifiers;
3. run them on the executor;
4. escalate: a leaf whose config names ``escalate_to`` and that judged a sample wrong sends that
   sample to the named verifier (TinyV's add-on mode: a model judge consulted only when the rule
   says no);
5. run group verifiers over all samples sharing a ``group``, after the per-sample ones;
6. combine the leaves of each sample's tree into its result.

Every result carries its verdict key (``details["verdict_key"]``: the verifier, its version, its
config's hash; a composite's is ``sum`` or ``gate`` over its leaves' keys). With the cache on for a
leaf (the request's ``cache``, else the ``cache_verifiers`` setting; never for an uncacheable
verifier), steps 3 and 4 first look each (sample, leaf) up by its content address, score only
the misses (one call per distinct address: a GRPO group's identical completions are judged once)
and store what they return. This is the one place the cache is consulted, in the parent process,
whichever engine runs the calls.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from rewardhub.cache import RewardCache, cache_key, open_cache
from rewardhub.calls import Call
from rewardhub.compose import GateNode, Leaf, Node, SumNode, combine, resolve
from rewardhub.errors import InvalidRequest, RewardhubError
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.registry import Registry, Timeouts
from rewardhub.settings import Settings
from rewardhub.types import OK, Result, Sample, VerifierSpec

__all__ = ["Scorer"]

MAX_RESOLVED = 1024  # distinct specs remembered; past this the memory starts over


class Scorer:
    def __init__(
        self, registry: Registry, executor: Executor, settings: Settings, cache: RewardCache | None = None
    ) -> None:
        self.registry = registry
        self.executor = executor
        self.settings = settings
        self.cache = cache if cache is not None else open_cache(settings)
        self._cache_by_default = frozenset(settings.cache_verifiers)
        self.timeouts = Timeouts(
            sample_s=settings.sample_timeout_s,
            code_s=settings.code_timeout_s,
            model_s=settings.model_timeout_s,
            max_s=settings.max_timeout_s,
        )
        # Resolved trees, their leaves' traits included, by canonical spec: the registry does not
        # change while we serve, and a trainer sends the same few specs all day (a one-sample
        # request resolved its spec anew, validating the config and hashing it, every time).
        self._resolved: dict[str, Node] = {}
        # Each leaf's escalation target (None: it has none), by leaf key: looked up once per leaf,
        # not once per sample (a 10,000-sample batch asked pydantic for the config's fields 10,000 times).
        self._escalations: dict[str, Node | None] = {}

    def plan(self, samples: Sequence[Sample], default: VerifierSpec | None) -> list[Node]:
        """Each sample's resolved tree; a bad spec fails the request (422/404) before any work."""
        cache = self._resolved
        if len(cache) > MAX_RESOLVED:  # the escalations are keyed by specs' leaves: they start over too
            cache.clear()
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
                    node = cache[key] = resolve(spec, self.registry, self.timeouts)
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
        cache: bool | None = None,
    ) -> list[Result]:
        """``cache``: True looks every cacheable leaf up, False none, None the ``cache_verifiers`` setting's."""
        nodes = list(nodes) if nodes is not None else self.plan(samples, default)
        leaf_results: list[dict[str, Result]] = [{} for _ in samples]

        # A batch usually shares one or a few trees: work out leaves, kinds and limits once per tree.
        per_node: dict[int, tuple[list[Leaf], list[Leaf]]] = {}  # (per-sample leaves, group leaves)
        for node in nodes:
            if id(node) not in per_node:
                per_node[id(node)] = (
                    [leaf for leaf in node.leaves if leaf.traits.kind != "group"],
                    [leaf for leaf in node.leaves if leaf.traits.kind == "group"],
                )
        per_sample = [(i, leaf) for i, node in enumerate(nodes) for leaf in per_node[id(node)][0]]
        judged = await self._run_leaves([(samples[i], leaf) for i, leaf in per_sample], cache, on_progress)
        for (i, leaf), result in zip(per_sample, judged, strict=True):
            leaf_results[i][leaf.key] = result

        distinct = {leaf.key: leaf for per_sample_leaves, _ in per_node.values() for leaf in per_sample_leaves}
        await self._escalate(samples, per_sample, distinct.values(), leaf_results, cache)
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
                cached = all(r.cached for r in leaf_results[i].values())
                details = {**result.details, "verdict_key": _node_key(node)}
                update = {"id": sample.id, "elapsed_ms": elapsed, "cached": cached, "details": details}
                result = result.model_copy(update=update)
            out.append(result)
        return out

    async def _run_leaves(
        self,
        wanted: Sequence[tuple[Sample, Leaf]],
        cache: bool | None,
        on_progress: ProgressCallback | None = None,
    ) -> list[Result]:
        """One result per (sample, per-sample leaf): from the cache where allowed, else from the executor."""
        addresses = [self._address(sample, leaf, cache) for sample, leaf in wanted]
        results: list[Result | None] = [None] * len(wanted)
        looked_up = [j for j, address in enumerate(addresses) if address is not None]
        if looked_up and self.cache is not None:
            started = time.perf_counter()
            queries = [(addresses[j], wanted[j][1].traits.verdict_key) for j in looked_up]
            found = await self._cache_call(self.cache.lookup, queries)
            lookup_ms = round((time.perf_counter() - started) * 1000 / len(looked_up), 3)
            for j, hit in zip(looked_up, found, strict=True):
                if hit is not None:
                    results[j] = hit.model_copy(update={"id": wanted[j][0].id, "cached": True, "elapsed_ms": lookup_ms})
            if on_progress is not None and (hits := sum(r is not None for r in results)):
                on_progress(hits)
        # One call per distinct address among the misses; samples without an address are scored each.
        first_of: dict[str, int] = {}
        to_run: list[int] = []
        for j, address in enumerate(addresses):
            if results[j] is not None:
                continue
            if address is None or address not in first_of:
                if address is not None:
                    first_of[address] = j
                to_run.append(j)
        calls = [_call(wanted[j][1], (wanted[j][0],)) for j in to_run]
        ran = await self.executor.run(calls, on_progress) if calls else []
        stored: list[tuple[str, Result]] = []
        for j, out in zip(to_run, ran, strict=True):
            results[j] = _stamped(wanted[j][1], out[0])
            address = addresses[j]
            if address is not None and results[j].details.get("verdict_key") == wanted[j][1].traits.verdict_key:
                stored.append((address, results[j]))  # a worker of another release signs another key: not stored
        for j, address in enumerate(addresses):
            if results[j] is None:  # an identical sample of this request was judged: its verdict is this one's
                source = results[first_of[address]]  # type: ignore[index]
                results[j] = source.model_copy(update={"id": wanted[j][0].id, "cached": True})  # type: ignore[union-attr]
                if on_progress is not None:
                    on_progress(1)
        if stored and self.cache is not None:
            await self._cache_call(self.cache.store, stored)
        return results  # type: ignore[return-value]

    def _address(self, sample: Sample, leaf: Leaf, cache: bool | None) -> str | None:
        """The sample's cache address under ``leaf``, or None when this leaf is not cached here."""
        if self.cache is None or cache is False or sample.session_id is not None:
            return None  # a session's files and state change between two scorings of one sample
        traits = leaf.traits
        if not traits.cacheable or (cache is None and leaf.name not in self._cache_by_default):
            return None
        return cache_key(traits.verdict_key, sample, traits.reads)

    async def _cache_call(self, method: Any, items: Any) -> Any:
        """A cache call, in a thread when its backend blocks (sqlite, Redis)."""
        assert self.cache is not None
        return await asyncio.to_thread(method, items) if self.cache.blocking else method(items)

    def _escalation(self, leaf: Leaf) -> Node | None:
        """The tree ``leaf``'s config escalates to, if any (resolved once per leaf)."""
        if leaf.key not in self._escalations:
            target = getattr(leaf.config, "escalate_to", None)
            self._escalations[leaf.key] = resolve(target, self.registry, self.timeouts) if target is not None else None
        return self._escalations[leaf.key]

    async def _escalate(
        self,
        samples: Sequence[Sample],
        per_sample: list[tuple[int, Leaf]],
        distinct: Iterable[Leaf],
        leaf_results: list[dict[str, Result]],
        cache: bool | None = None,
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
        judged: list[tuple[Sample, Leaf]] = []
        for i, _, node in wanted:
            if not isinstance(node, Leaf):
                raise InvalidRequest("escalate_to must name a single verifier")
            judged.append((samples[i], node))
        for (i, leaf, _), judge in zip(wanted, await self._run_leaves(judged, cache), strict=True):
            rule = leaf_results[i][leaf.key]
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
            _call(group_leaves[leaf_key], tuple(samples[i] for i in groups[(leaf_key, g)])) for leaf_key, g in keys
        ]
        for (leaf_key, g), results in zip(keys, await self.executor.run(calls), strict=True):
            for i, result in zip(groups[(leaf_key, g)], results, strict=True):
                leaf_results[i][leaf_key] = _stamped(group_leaves[leaf_key], result)


def _call(leaf: Leaf, samples: tuple[Sample, ...]) -> Call:
    return Call.of(leaf.traits, leaf.config, samples)


def _stamped(leaf: Leaf, result: Result) -> Result:
    """``result`` with its verdict key: run_call signs what it judged; a timeout or a lost call is signed here."""
    if "verdict_key" in result.details:
        return result
    return result.model_copy(update={"details": {**result.details, "verdict_key": leaf.traits.verdict_key}})


def _node_key(node: Node) -> dict[str, str]:
    """A composite's verdict key: ``sum`` or ``gate``, over its structure and its leaves' keys."""
    canonical = json.dumps(_node_structure(node), sort_keys=True, separators=(",", ":"))
    label = "sum" if isinstance(node, SumNode) else "gate"
    return {"verifier": label, "version": "1", "config_hash": hashlib.sha256(canonical.encode()).hexdigest()[:16]}


def _node_structure(node: Node) -> Any:
    if isinstance(node, Leaf):
        return node.traits.verdict_key
    if isinstance(node, SumNode):
        terms = [[_node_structure(term), weight] for term, weight in node.terms]
        return {"sum": terms, "clip": node.clip, "scale": node.scale}
    assert isinstance(node, GateNode)
    return {
        "gate": _node_structure(node.gate),
        "then": _node_structure(node.then),
        "threshold": node.threshold,
        "otherwise": node.otherwise,
    }


def _spec_key(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if hasattr(spec, "model_dump"):
        return json.dumps(spec.model_dump(mode="json"), sort_keys=True)
    return json.dumps(spec, sort_keys=True, default=str)
