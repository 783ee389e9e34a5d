"""One training step, read top to bottom: collect, keep informative groups, advantages, update.

:func:`train_step` is the whole step; the functions below it are its stages, in order, and a
:class:`~rewardhub.trainer.generated.StepBatch` is the one object they pass along.

1. **collect** P prompts, G samples each (:mod:`rewardhub.trainer.rounds`): generated in chunks,
   each chunk sent for scoring as soon as it exists; while the service scores, the frozen
   models' log-probs and, when the update is a single optimizer step, its first forward pass, so
   the reward latency hides behind them. Each round is **shaped** once, as its judgements arrive
   (:func:`judge`: overlong penalty, masks); nothing shapes it again;
2. **keep informative groups** (DAPO dynamic sampling): a group whose shaped rewards are all equal
   has all-zero group-relative advantages and is dropped; more rounds refill the batch;
3. **advantages** of the kept samples: the KL penalty in the reward, dense rewards, the estimator;
4. **update** the policy (:mod:`rewardhub.trainer.update`) and give the engine the new weights;
5. the step's dump (:mod:`rewardhub.trainer.dumps`) and its row of ``metrics.jsonl``
   (:mod:`rewardhub.trainer.step_metrics`).

Whether the update is off-policy is :attr:`~rewardhub.trainer.config.AlgorithmConfig.off_policy`,
decided in the configuration and read here, by the rounds and by the update.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from rewardhub.background import RewardChannel

from .algorithms import kl_penalty, zero_variance_groups
from .algorithms.tables import advantage_estimator
from .config import TrainConfig
from .dumps import dump_step
from .generated import Generated, StepBatch, merge_generated
from .logprobs import first_micro_batch
from .objective import compute_advantages, dense_token_rewards
from .rounds import PendingRound
from .shaping import shape_rewards
from .step_metrics import step_row
from .timing import StepTiming
from .update import TrainBatch, policy_update

if TYPE_CHECKING:
    from .loop import Trainer

__all__ = ["advantages", "collect", "judge", "keep_informative_groups", "train_batch", "train_step"]


def train_step(t: Trainer, channel: RewardChannel) -> dict[str, Any]:
    """Collect the step's samples, compute their advantages, update the policy; the metrics row."""
    cfg = t.cfg
    started = time.perf_counter()
    timing = StepTiming()
    with timing.phase("publish"):
        t.rounds.publish_policy(t.step)  # 0: the weights that will generate, for reward.dense's $policy
    if cfg.algorithm.dynamic_sampling.enabled:
        batch = keep_informative_groups(t, channel, timing)  # 1 + 2
    else:
        batch = collect(t, channel, timing)  # 1
    with timing.phase("train"):
        batch = dataclasses.replace(batch, advantages=advantages(batch.kept, cfg))  # 3
        update = policy_update(t.model, t.optimizer, train_batch(batch, t.device), cfg, batch.prefetched)  # 4
        t.scheduler.step()
        t.engine.sync_weights()
        t.step += 1
    timing.step = time.perf_counter() - started
    if cfg.debug.dump and t.step % cfg.debug.every == 0:  # 5
        dump_step(cfg, t.step, batch, update)
    return step_row(cfg, t.step, batch, update, timing)


def collect(t: Trainer, channel: RewardChannel, timing: StepTiming) -> StepBatch:
    """One round of P prompts, trained on whole.

    With a single optimizer step, the update's first forward pass (with its autograd graph) runs
    while the service is still scoring, so the reward latency hides behind it.
    """
    cfg = t.cfg
    pending = t.rounds.start(channel, t.stream.take(cfg.rollout.prompts_per_step), f"{t.step}-1", timing)
    prefetched = None
    if not cfg.algorithm.off_policy:
        with timing.phase("train"):
            prefetched = first_micro_batch(
                t.model, pending.rollout, cfg.optim.micro_batch_size, cfg.rollout.temperature or 1.0, t.device
            )
    generated = judge(pending, cfg, timing)
    return StepBatch(generated, generated, rounds=1, prefetched=prefetched)


def judge(pending: PendingRound, cfg: TrainConfig, timing: StepTiming) -> Generated:
    """Wait for a round's judgements and shape them: the one place rewards are shaped (the greedy
    responses of ReMax's baseline too, the same way)."""
    rewards = pending.collect(timing)
    greedy = pending.collect_greedy(timing)
    greedy_shaped = None
    if greedy is not None and pending.greedy is not None:
        greedy_shaped = shape_rewards(pending.greedy.rollout, greedy, cfg)
    return pending.generated(rewards, shape_rewards(pending.rollout, rewards, cfg), greedy_shaped)


def keep_informative_groups(t: Trainer, channel: RewardChannel, timing: StepTiming) -> StepBatch:
    """DAPO dynamic sampling: rounds of P prompts until P groups with unequal rewards are kept,
    or ``max_rounds`` rounds are spent (Yu et al. 2025, "DAPO", arXiv:2503.14476, section 3.2).

    A group whose shaped rewards are all equal has all-zero group-relative advantages: it only
    dilutes the batch. Groups are kept in the order they were generated and never more than the
    batch needs. When no group of any round is informative, the last round is trained on (only
    the entropy term acts). The reward metrics describe everything generated; the update sees
    only what was kept.
    """
    cfg = t.cfg
    P, G = cfg.rollout.prompts_per_step, cfg.rollout.group_size
    generated: list[Generated] = []
    kept: list[Generated] = []
    kept_groups = 0
    count = 0
    while count < cfg.algorithm.dynamic_sampling.max_rounds:
        count += 1
        gen = judge(t.rounds.start(channel, t.stream.take(P), f"{t.step}-{count}", timing), cfg, timing)
        generated.append(gen)
        keep = ~zero_variance_groups(gen.shaped.rewards.view(-1, G), gen.shaped.in_loss.view(-1, G))
        keep &= torch.cumsum(keep.long(), 0) <= P - kept_groups  # no more than the batch needs
        if keep.any():
            kept.append(gen.select_groups(keep, G))
            kept_groups += int(keep.sum())
        if kept_groups >= P:
            break
    if not kept:
        kept = [generated[-1]]
    pad_id = t.rounds.pad_id
    return StepBatch(merge_generated(generated, pad_id), merge_generated(kept, pad_id), rounds=count)


def advantages(kept: Generated, cfg: TrainConfig) -> Tensor:
    """Per-token advantages [B, T] of the kept samples, from the estimator ``algorithm.advantage``
    names in :data:`~rewardhub.trainer.algorithms.tables.ADVANTAGE_ESTIMATORS`.

    With ``kl.where: reward`` the per-token penalty -beta * KL(pi_old || pi_ref) enters the rewards
    the estimator sees; an estimator that reads dense rewards gets each result's ``steps`` spread
    over the response tokens.
    """
    a, G = cfg.algorithm, cfg.rollout.group_size
    ro = kept.rollout
    penalty = None
    if a.kl_in_reward and kept.ref_logp is not None:
        old = kept.old_logp if kept.old_logp is not None else ro.logprobs  # old_logprobs: rollout anchors on the engine
        penalty = -a.kl.coef * kl_penalty(old, kept.ref_logp, a.kl.estimator) * ro.response_mask
    dense = None
    if advantage_estimator(a.advantage).dense_rewards:
        dense = dense_token_rewards(kept.rewards.steps, ro.response_mask, ~ro.truncated)[0]
    shaped, greedy = kept.shaped, kept.greedy
    return compute_advantages(
        a,
        shaped.rewards.view(-1, G),
        shaped.in_loss.view(-1, G),
        kept.loss_mask,
        penalty,
        dense,
        None if greedy is None else greedy.rewards,
        None if greedy is None else greedy.in_loss,
    )


def train_batch(batch: StepBatch, device: torch.device) -> TrainBatch:
    """What the update trains on, on ``device``: the kept samples and their advantages."""
    kept, ro = batch.kept, batch.kept.rollout
    assert batch.advantages is not None, "the advantages come before the update"
    return TrainBatch(
        prompt_ids=ro.prompt_ids.to(device),
        prompt_mask=ro.prompt_mask.to(device),
        response_ids=ro.response_ids.to(device),
        response_mask=ro.response_mask.to(device),
        loss_mask=kept.loss_mask.to(device),
        advantages=batch.advantages.to(device),
        rollout_logp=ro.logprobs.to(device),
        old_logp=None if kept.old_logp is None else kept.old_logp.to(device),
        ref_logp=None if kept.ref_logp is None else kept.ref_logp.to(device),
    )
