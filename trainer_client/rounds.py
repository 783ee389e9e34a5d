"""A round: P prompts, G samples each, generated and sent for scoring; the step collects the judgements.

Generation goes in chunks of ``rollout.chunk_prompts`` prompts; each chunk is submitted to the
reward channel as soon as it exists, so the service scores while the next chunk generates. While
the last answers are on their way, the frozen models' log-probs of the round are computed
(the reference policy's, and the policy's own before the update when the update is off-policy or
the KL goes in the reward). :meth:`Rounds.start` returns a :class:`PendingRound`;
:meth:`PendingRound.collect` blocks until the judgements are back.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from rewardhub.background import RewardChannel, Scored
from rewardhub.types import Sample

from .algorithms.tables import advantage_estimator
from .config import RolloutConfig, TrainConfig
from .data import PromptRecord, PromptTokens
from .generated import Generated
from .logprobs import rollout_logprobs
from .policy_snapshot import PolicySnapshots, uses_policy, with_policy
from .rewards import RewardBatch, to_reward_batch, verifier_label
from .rollout import Rollout, RolloutEngine, SamplingParams, concat_rollouts
from .shaping import Shaped
from .timing import StepTiming

__all__ = ["Greedy", "PendingRound", "Rounds", "as_samples", "sampling_params", "sent_logprobs"]


def sampling_params(rollout: RolloutConfig, temperature: float | None = None) -> SamplingParams:
    """The configured sampling, at ``temperature`` when given (evaluation, greedy passes)."""
    return SamplingParams(
        rollout.max_new_tokens,
        rollout.temperature if temperature is None else temperature,
        rollout.top_p,
        rollout.top_k,
    )


def as_samples(
    records: Sequence[PromptRecord],
    texts: Sequence[str],
    group_size: int,
    tag: str,
    default_verifier: Any,
    extra: Sequence[dict[str, Any]] | None = None,
) -> tuple[list[Sample], list[str], list[str]]:
    """The service's samples for ``group_size`` responses per record, with their groups and verifier labels.

    Sample ``g`` of record ``p`` is ``{tag}-{p}-{g}`` in group ``{tag}-{p}``; ``texts`` is laid out
    record by record, as the engine generated them; ``extra`` (one per text) joins each metadata.
    """
    samples, groups, labels = [], [], []
    for p, record in enumerate(records):
        for g in range(group_size):
            group = f"{tag}-{p}"
            samples.append(
                Sample(
                    id=f"{group}-{g}",
                    prompt=record.prompt,
                    response=texts[p * group_size + g],
                    reference=record.reference,
                    verifier=record.verifier,
                    group=group,
                    metadata={**(record.metadata or {}), **(extra[p * group_size + g] if extra else {})},
                )
            )
            groups.append(group)
            labels.append(verifier_label(record.verifier if record.verifier is not None else default_verifier))
    return samples, groups, labels


@dataclass(frozen=True)
class PendingRound:
    """A generated round whose rewards are still being computed by the service."""

    records: tuple[PromptRecord, ...]
    rollout: Rollout
    futures: tuple[concurrent.futures.Future[Scored], ...]
    groups: tuple[str, ...]
    labels: tuple[str, ...]
    ref_logp: Tensor | None
    old_logp: Tensor | None
    greedy: Greedy | None = None
    dense: tuple[concurrent.futures.Future[Scored], ...] | None = None  # reward.dense's judgements, per chunk

    def collect(self, timing: StepTiming) -> RewardBatch:
        """Block until the service has answered for every chunk of the round (and ``reward.dense`` too)."""
        rewards = _collect(self.futures, self.labels, timing)
        if self.dense is None:
            return rewards
        return rewards.with_dense(_collect(self.dense, self.labels, timing))

    def collect_greedy(self, timing: StepTiming) -> RewardBatch | None:
        """The judgements of the greedy responses, when the round has them (ReMax's baseline)."""
        return None if self.greedy is None else _collect(self.greedy.futures, self.greedy.labels, timing)

    def generated(self, rewards: RewardBatch, shaped: Shaped, greedy: Shaped | None = None) -> Generated:
        """The round with its judgement (:meth:`collect`), its shaped rewards and its greedy baseline's."""
        return Generated(self.records, self.rollout, rewards, shaped, self.groups, self.ref_logp, self.old_logp, greedy)


@dataclass(frozen=True)
class Greedy:
    """One greedy response per prompt of a round, sent for scoring beside the sampled ones."""

    rollout: Rollout
    futures: tuple[concurrent.futures.Future[Scored], ...]
    labels: tuple[str, ...]


def _collect(
    futures: Sequence[concurrent.futures.Future[Scored]], labels: Sequence[str], timing: StepTiming
) -> RewardBatch:
    with timing.phase("reward"):
        scored = [future.result() for future in futures]
    timing.latency += max(s.done_at for s in scored) - scored[0].sent_at
    return to_reward_batch([result for s in scored for result in s.results], labels)


class Rounds:
    """Generates rounds from the policy being trained and has them scored."""

    def __init__(
        self,
        cfg: TrainConfig,
        engine: RolloutEngine,
        prompts: PromptTokens,
        model: torch.nn.Module,
        ref_model: torch.nn.Module | None,
        device: torch.device,
    ) -> None:
        self.cfg = cfg
        self.engine = engine
        self.prompts = prompts
        self.model = model
        self.ref_model = ref_model
        self.device = device
        self.pad_id: int = prompts.tokenizer.pad_token_id
        self.dense_spec: Any = cfg.reward.dense
        self.snapshots = None
        if uses_policy(cfg.reward.dense):
            self.snapshots = PolicySnapshots(Path(cfg.output_dir), model, prompts.tokenizer, cfg.model.path)

    def publish_policy(self, step: int) -> None:
        """Before a step's rounds: the policy's weights where ``reward.dense``'s ``$policy`` points."""
        if self.snapshots is not None:
            self.dense_spec = with_policy(self.cfg.reward.dense, self.snapshots.publish(step))

    def start(
        self, channel: RewardChannel, records: Sequence[PromptRecord], tag: str, timing: StepTiming
    ) -> PendingRound:
        """Generate in chunks, each sent for scoring at once; frozen-model log-probs while they are scored."""
        G = self.cfg.rollout.group_size
        chunk = self.cfg.rollout.chunk_prompts or len(records)
        parts: list[Rollout] = []
        futures = []
        groups: list[str] = []
        labels: list[str] = []
        greedy = [] if advantage_estimator(self.cfg.algorithm.advantage).greedy_baseline else None
        dense = [] if self.dense_spec is not None else None
        for start in range(0, len(records), chunk):
            recs = records[start : start + chunk]
            with timing.phase("generate"):
                rollout = self.engine.generate(
                    [self.prompts("train", r) for r in recs for _ in range(G)], self.sampling()
                )
            samples, chunk_groups, chunk_labels = as_samples(
                recs, rollout.texts, G, f"{tag}-{start}", self.cfg.reward.verifier, sent_logprobs(rollout)
            )
            futures.append(channel.submit(samples, self.cfg.reward.verifier))
            if dense is not None:
                # the dense verifier judges every sample, whichever verifier its record names for the outcome
                dense.append(
                    channel.submit([x.model_copy(update={"verifier": None}) for x in samples], self.dense_spec)
                )
            parts.append(rollout)
            groups += chunk_groups
            labels += chunk_labels
            if greedy is not None:
                greedy.append(self.greedy_chunk(channel, recs, f"{tag}-{start}-greedy", timing))
        rollout = concat_rollouts(parts, self.pad_id)
        with timing.phase("train"):
            ref_logp, old_logp = self.frozen_logprobs(rollout)
        return PendingRound(
            tuple(records),
            rollout,
            tuple(futures),
            tuple(groups),
            tuple(labels),
            ref_logp,
            old_logp,
            None if greedy is None else _joined(greedy, self.pad_id),
            None if dense is None else tuple(dense),
        )

    def greedy_chunk(
        self, channel: RewardChannel, records: Sequence[PromptRecord], tag: str, timing: StepTiming
    ) -> Greedy:
        """One greedy (temperature 0) response per record, sent for scoring: ReMax's baseline."""
        with timing.phase("generate"):
            rollout = self.engine.generate([self.prompts("train", r) for r in records], self.sampling(temperature=0.0))
        samples, _, labels = as_samples(
            records, rollout.texts, 1, tag, self.cfg.reward.verifier, sent_logprobs(rollout)
        )
        return Greedy(rollout, (channel.submit(samples, self.cfg.reward.verifier),), tuple(labels))

    def sampling(self, temperature: float | None = None) -> SamplingParams:
        """The round's sampling, asking the engine for top-k log-probs when the service is sent them."""
        params = sampling_params(self.cfg.rollout, temperature)
        return dataclasses.replace(params, top_logprobs=self.cfg.reward.send_logprobs or 0)

    def frozen_logprobs(self, rollout: Rollout) -> tuple[Tensor | None, Tensor | None]:
        """(reference log-probs, the policy's before the update), each only when something reads it.

        With ``old_logprobs: rollout`` the policy's are never computed: the ratio and the KL in the
        reward are anchored on the engine's, and the mismatch is measured against the fresh pass.
        """
        a = self.cfg.algorithm
        micro, temperature = self.cfg.optim.micro_batch_size, self.cfg.rollout.temperature or 1.0
        ref = None
        if self.ref_model is not None:
            ref = rollout_logprobs(self.ref_model, rollout, micro, temperature, self.device)
        old = None
        if (a.off_policy or a.kl_in_reward) and a.old_logprobs == "trainer":
            old = rollout_logprobs(self.model, rollout, micro, temperature, self.device)
        return ref, old


def sent_logprobs(rollout: Rollout) -> list[dict[str, Any]] | None:
    """``{"logprobs": [[top-k per token], ...], "response_tokens": n}`` per response, when the rollout has
    them (``reward.send_logprobs``): the shape ``self_certainty`` reads, rounded to 6 decimals."""
    if rollout.top_logprobs is None:
        return None
    lengths = rollout.lengths.tolist()
    return [
        {"logprobs": [[round(v, 6) for v in row] for row in rollout.top_logprobs[i, :n].tolist()], "response_tokens": n}
        for i, n in enumerate(lengths)
    ]


def _joined(chunks: Sequence[Greedy], pad_id: int) -> Greedy:
    return Greedy(
        concat_rollouts([c.rollout for c in chunks], pad_id),
        tuple(f for c in chunks for f in c.futures),
        tuple(label for c in chunks for label in c.labels),
    )
