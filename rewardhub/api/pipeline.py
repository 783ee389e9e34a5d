"""The one score path of the service: every route, job and compatibility endpoint scores here.

A request's samples go through four steps, in this order and nowhere else:

1. **plan**: the sample count is checked against the server's limit (413), then each sample's
   verifier spec is resolved into its tree; a bad spec fails the request (404/422) before any work;
   a sample whose tree holds a verifier that ``reads_caller`` (``session_tests``), or that names a
   ``session_id`` (the ``code`` verifier judging in a session), gets the caller
   written into its metadata (:data:`~rewardhub.verifier.CALLER_FIELD`: who asks, and the grant
   that lets that verifier judge the caller's sessions, wherever it runs);
2. **admit**: the engine's queue bound (429 with Retry-After); each refusal is counted in
   ``rewardhub_rejected_total``;
3. **score**: the :class:`~rewardhub.scoring.Scorer` runs the trees on the executor;
4. **observe**: per-verifier sample counts, times, timeouts and errors go to the metrics, and
   the results to the operator page's statistics (:mod:`rewardhub.ui`) under the request's run tag.

Steps 1-2 happen when the request arrives (:meth:`ScorePipeline.admit`), so a request that cannot
be served is refused before it is accepted; steps 3-4 happen when its results are wanted
(:meth:`Admitted.score`), which for a job is later, in the background.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub.api.metrics import Metrics
from rewardhub.api.middleware.run_tag import accept_run, current_run
from rewardhub.compose import Node
from rewardhub.errors import Overloaded, PayloadTooLarge
from rewardhub.execution import Executor, ProgressCallback
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierSpec
from rewardhub.ui.recorder import StatsRecorder
from rewardhub.verifier import CALLER_FIELD

__all__ = ["Admitted", "ScorePipeline"]


@dataclass(frozen=True)
class Admitted:
    """Samples that were planned and admitted: scoring them is all that is left."""

    pipeline: ScorePipeline
    samples: Sequence[Sample]
    nodes: Sequence[Node]
    run: str | None = None
    cache: bool | None = None  # the request's ``cache``: None leaves it to the cache_verifiers setting

    async def score(self, on_progress: ProgressCallback | None = None) -> list[Result]:
        if not self.samples:
            return []
        scorer = self.pipeline.scorer
        results = await scorer.score(self.samples, nodes=self.nodes, on_progress=on_progress, cache=self.cache)
        self.pipeline.metrics.observe_results(self.nodes, results)
        if scorer.cache is not None and (self.cache or (self.cache is None and self.pipeline.settings.cache_verifiers)):
            self.pipeline.metrics.observe_cache()
        if self.pipeline.stats is not None:
            self.pipeline.stats.observe(self.samples, self.nodes, results, self.run)
        return results


class ScorePipeline:
    def __init__(
        self,
        scorer: Scorer,
        executor: Executor,
        metrics: Metrics,
        settings: Settings,
        stats: StatsRecorder | None = None,
    ) -> None:
        self.scorer = scorer
        self.executor = executor
        self.metrics = metrics
        self.settings = settings
        self.stats = stats
        metrics.watch_cache(scorer.cache)
        if stats is not None:
            stats.watch_cache(scorer.cache)

    def admit(
        self,
        samples: Sequence[Sample],
        default: VerifierSpec | None,
        run: str | None = None,
        cache: bool | None = None,
        caller: Callable[[], Mapping[str, Any] | None] | None = None,
    ) -> Admitted:
        """Plan and admit, or refuse the request with its 4xx. ``run``: the body's tag, else the header's;
        ``caller``: who asks (it makes a session grant, :func:`rewardhub.sessions.grants.grant`),
        called once if a sample's verifier reads it."""
        run = accept_run(run if run is not None else current_run())
        limit = self.settings.max_samples_per_request
        if len(samples) > limit:
            self.metrics.rejected.labels("too_many_samples").inc()
            raise PayloadTooLarge(
                f"{len(samples)} samples exceed the limit of {limit} per request", detail={"limit": limit}
            )
        nodes = self.scorer.plan(samples, default)
        samples = self._with_caller(samples, nodes, caller)
        try:
            self.executor.admit(len(samples))
        except Overloaded:
            self.metrics.rejected.labels("overloaded").inc()
            raise
        return Admitted(self, samples, nodes, run, cache)

    def _with_caller(
        self, samples: Sequence[Sample], nodes: Sequence[Node], caller: Callable[[], Mapping[str, Any] | None] | None
    ) -> Sequence[Sample]:
        """The samples, those judged by a verifier that ``reads_caller`` with ``caller`` in their
        metadata (and never a caller's own value under that key)."""
        reads: dict[int, bool] = {}  # by tree: a batch shares a few
        out: list[Sample] | None = None
        given: Mapping[str, Any] | None = None
        for i, node in enumerate(nodes):
            found = reads.get(id(node))
            if found is None:
                found = reads[id(node)] = any(leaf.traits.reads_caller for leaf in node.leaves)
            if not found and samples[i].session_id is None:  # a sample judged in a session is the caller's too
                continue
            if out is None:
                out, given = list(samples), caller() if caller is not None else None
            metadata = {key: value for key, value in samples[i].metadata.items() if key != CALLER_FIELD}
            if given is not None:
                metadata[CALLER_FIELD] = dict(given)
            out[i] = samples[i].model_copy(update={"metadata": metadata})
        return samples if out is None else out

    async def score(
        self,
        samples: Sequence[Sample],
        default: VerifierSpec | None,
        run: str | None = None,
        cache: bool | None = None,
        caller: Callable[[], Mapping[str, Any] | None] | None = None,
    ) -> list[Result]:
        """Plan, admit, score and observe, in one go (a request that waits for its answer)."""
        return await self.admit(samples, default, run, cache, caller).score()
