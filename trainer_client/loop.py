"""The training loop: generate, score, compute advantages, update, log; repeat.

One step:

1. draw P prompts and sample G responses each with the rollout engine, which records its own
   log-probs (the behaviour policy); chunks are sent for scoring as soon as they are generated;
2. while the service scores, compute what the update needs from frozen models (reference
   log-probs; the pre-update log-probs when the update is off-policy or KL goes in the reward);
3. collect the results; samples the service could not judge are masked out of the loss; with
   DAPO dynamic sampling, groups with equal rewards are dropped and more prompts sampled;
4. shape the rewards (overlong penalty, KL), compute advantages, run the policy update
   (:mod:`rewardhub.trainer.update`), sync the engine's weights;
5. write the step's metrics (:mod:`rewardhub.trainer.metrics`), dumps, evaluations, checkpoints.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
import yaml
from rewardhub.trainer.algorithms import kl_penalty, overlong_penalty, zero_variance_groups
from rewardhub.trainer.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from rewardhub.trainer.config import TrainConfig
from rewardhub.trainer.data import PromptRecord, PromptStream, load_records, tokenize_prompt
from rewardhub.trainer.debug import dump_step
from rewardhub.trainer.generated import Generated, merge_generated
from rewardhub.trainer.logprobs import TokenStats, response_logprobs
from rewardhub.trainer.metrics import MetricsWriter
from rewardhub.trainer.modeling import frozen_copy, load_policy
from rewardhub.trainer.objective import compute_advantages, dense_token_rewards
from rewardhub.trainer.optim import build_optimizer, build_scheduler
from rewardhub.trainer.progress import StepReporter
from rewardhub.trainer.rewards import (
    RewardProcess,
    RewardWorker,
    Scored,
    ScorerFactory,
    service_scorer,
    to_reward_batch,
    verifier_label,
)
from rewardhub.trainer.rollout import HFRolloutEngine, Rollout, RolloutEngine, SamplingParams, concat_rollouts
from rewardhub.trainer.step_metrics import (
    actor_metrics,
    group_metrics,
    ok_mean,
    response_metrics,
    reward_by_verifier,
    reward_metrics,
)
from rewardhub.trainer.update import TrainBatch, policy_update
from rich.console import Console
from torch import Tensor

from rewardhub.types import Sample

__all__ = ["Trainer", "reward_service"]

Rewards = RewardWorker | RewardProcess
"""Where scoring requests go: a thread of this process, or a child process (the default)."""


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


@contextlib.contextmanager
def reward_service(cfg: TrainConfig) -> Iterator[str]:
    """The URL of the reward service: the configured one, or an embedded one started here."""
    if cfg.reward.embedded:
        from rewardhub.launcher import ServiceProcess, ServiceThread

        workers = cfg.reward.embedded_workers
        server = ServiceProcess(workers) if cfg.reward.embedded_in == "subprocess" else ServiceThread(workers=workers)
        with server as url:
            yield url
    elif cfg.reward.url is not None:
        yield cfg.reward.url
    else:
        raise ValueError("no reward service: set reward.url, or reward.embedded: true to start one for this run")


class Trainer:
    """Owns the policy, optimizer, engine and data; :meth:`run` trains ``cfg.steps`` steps.

    ``scorer`` replaces the reward service (tests, offline experiments): a factory of async
    context managers yielding an object with ``async score(samples, verifier)``.
    """

    def __init__(self, cfg: TrainConfig, scorer: ScorerFactory | None = None, console: Console | None = None) -> None:
        self.cfg = cfg
        self.run_dir = Path(cfg.output_dir)
        self.console = console or Console(stderr=True)
        self._scorer = scorer
        if cfg.threads is not None:
            torch.set_num_threads(cfg.threads)
        self.device = torch.device(
            "cuda" if cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()) else "cpu"
        )
        torch.manual_seed(cfg.seed)
        self.model, self.tokenizer = load_policy(cfg.model, cfg.seed)
        self.model.to(self.device).train()
        self.ref_model = frozen_copy(self.model) if (cfg.algorithm.kl.reference or cfg.algorithm.kl.coef > 0) else None
        self.optimizer = build_optimizer(self.model, cfg.optim)
        self.scheduler = build_scheduler(self.optimizer, cfg.optim, cfg.steps)
        self.generator = torch.Generator(self.device).manual_seed(cfg.seed)
        self.engine = self._build_engine()
        self.pad_id = self.tokenizer.pad_token_id
        self.train_records = load_records(cfg.data, "train")
        self.eval_records = load_records(cfg.data, "eval")
        self._prompt_ids: dict[tuple[str, int], list[int]] = {}
        self.stream = PromptStream(self.train_records, cfg.seed, cfg.data.shuffle)
        self.step = 0

    # ------------------------------------------------------------------ set-up
    def _build_engine(self) -> RolloutEngine:
        if self.cfg.rollout.engine == "vllm":
            from rewardhub.trainer.rollout.vllm_engine import VLLMRolloutEngine

            return VLLMRolloutEngine(self.model, self.tokenizer, self.cfg, self.generator)
        return HFRolloutEngine(self.model, self.tokenizer, self.generator, lean=self.cfg.rollout.lean_decoder)

    def _tokens(self, split: str, record: PromptRecord) -> list[int]:
        key = (split, record.index)
        if key not in self._prompt_ids:
            self._prompt_ids[key] = tokenize_prompt(self.tokenizer, record.prompt, self.cfg.data.max_prompt_tokens)
        return self._prompt_ids[key]

    def _open_rewards(self, stack: contextlib.ExitStack) -> Rewards:
        if self._scorer is not None:
            return stack.enter_context(RewardWorker(self._scorer))
        url = stack.enter_context(reward_service(self.cfg))
        factory = service_scorer(self.cfg.reward, url)
        if self.cfg.reward.client_process:
            return stack.enter_context(RewardProcess(factory))
        return stack.enter_context(RewardWorker(factory))

    def save_resolved_config(self) -> Path:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / "config.yaml"
        path.write_text(yaml.safe_dump(self.cfg.model_dump(mode="json"), sort_keys=False))
        return path

    # ------------------------------------------------------------------ running
    def run(self) -> list[dict[str, Any]]:
        """Train until ``cfg.steps``; returns the metric rows written by this call."""
        cfg = self.cfg
        self.save_resolved_config()
        rows: list[dict[str, Any]] = []
        writer = MetricsWriter(
            self.run_dir,
            cfg.logging.tensorboard,
            cfg.logging.wandb,
            cfg.logging.wandb_project,
            cfg.model_dump(mode="json"),
        )
        with contextlib.ExitStack() as stack:
            stack.callback(writer.close)
            worker = self._open_rewards(stack)
            self._resume(writer)
            reporter = StepReporter(cfg.steps, self.step, cfg.logging.progress, self.console)
            stack.callback(reporter.close)
            if self.step == 0 and self.eval_records:
                first = self.evaluate(worker)
                writer.write_eval({"step": 0, **first})
                reporter.note(f"eval before training: {_eval_line(first)}")
            while self.step < cfg.steps:
                row = self.train_step(worker)
                if self.eval_records and self._due(cfg.eval.every):
                    evaluation = self.evaluate(worker)
                    writer.write_eval({"step": self.step, **evaluation})
                    row.update(evaluation)
                writer.write(row)
                rows.append(row)
                reporter.update(row)
                ck = cfg.checkpoint
                if (ck.every and self.step % ck.every == 0) or (self.step == cfg.steps and ck.save_final):
                    self.save()
        return rows

    def _due(self, every: int) -> bool:
        return self.step == self.cfg.steps or (every > 0 and self.step % every == 0)

    def _resume(self, writer: MetricsWriter) -> None:
        spec = self.cfg.checkpoint.resume
        path = None
        if spec == "auto":
            path = latest_checkpoint(self.run_dir)
        elif spec is not None:
            path = Path(spec)
        if path is None:
            writer.truncate_after(0)
            return
        state = load_checkpoint(path, self.model, self.optimizer, self.scheduler, self.generator)
        self.step = state.step
        self.stream.position = state.position
        self.engine.sync_weights()
        writer.truncate_after(self.step)

    def save(self) -> Path:
        return save_checkpoint(
            self.run_dir,
            self.step,
            self.model,
            self.optimizer,
            self.scheduler,
            self.stream.position,
            self.generator,
            self.tokenizer,
            self.cfg.checkpoint.keep,
        )

    # ------------------------------------------------------------------ one step
    def _sampling(self, temperature: float | None = None) -> SamplingParams:
        r = self.cfg.rollout
        return SamplingParams(r.max_new_tokens, r.temperature if temperature is None else temperature, r.top_p, r.top_k)

    def _samples(
        self, records: Sequence[PromptRecord], texts: Sequence[str], group_size: int, tag: str
    ) -> tuple[list[Sample], list[str], list[str]]:
        samples, groups, labels = [], [], []
        default = self.cfg.reward.verifier
        for p, record in enumerate(records):
            for g in range(group_size):
                text = texts[p * group_size + g]
                group = f"{tag}-{p}"
                samples.append(
                    Sample(
                        id=f"{group}-{g}",
                        prompt=record.prompt,
                        response=text,
                        reference=record.reference,
                        verifier=record.verifier,
                        group=group,
                        metadata=record.metadata or {},
                    )
                )
                groups.append(group)
                labels.append(verifier_label(record.verifier if record.verifier is not None else default))
        return samples, groups, labels

    def _generate_and_score(
        self, worker: Rewards, records: Sequence[PromptRecord], tag: str, timing: dict[str, float]
    ) -> Generated:
        return self._finish_round(self._start_round(worker, records, tag, timing), timing)

    def _start_round(
        self, worker: Rewards, records: Sequence[PromptRecord], tag: str, timing: dict[str, float]
    ) -> PendingRound:
        """Generate in chunks, each sent for scoring at once; frozen-model log-probs while they are scored."""
        G = self.cfg.rollout.group_size
        chunk = self.cfg.rollout.chunk_prompts or len(records)
        parts: list[Rollout] = []
        futures = []
        groups: list[str] = []
        labels: list[str] = []
        for start in range(0, len(records), chunk):
            recs = records[start : start + chunk]
            t = time.perf_counter()
            rollout = self.engine.generate([self._tokens("train", r) for r in recs for _ in range(G)], self._sampling())
            timing["generate"] += time.perf_counter() - t
            samples, chunk_groups, chunk_labels = self._samples(recs, rollout.texts, G, f"{tag}-{start}")
            futures.append(worker.submit(samples, self.cfg.reward.verifier))
            parts.append(rollout)
            groups += chunk_groups
            labels += chunk_labels
        rollout = concat_rollouts(parts, self.pad_id)
        t = time.perf_counter()
        ref_logp, old_logp = self._frozen_logprobs(rollout)
        timing["train"] += time.perf_counter() - t
        return PendingRound(tuple(records), rollout, tuple(futures), tuple(groups), tuple(labels), ref_logp, old_logp)

    def _finish_round(self, pending: PendingRound, timing: dict[str, float]) -> Generated:
        """Block until the service has answered for every chunk of the round."""
        t = time.perf_counter()
        scored = [future.result() for future in pending.futures]
        timing["reward"] += time.perf_counter() - t
        timing["latency"] += max(s.done_at for s in scored) - scored[0].sent_at
        results = [result for s in scored for result in s.results]
        rewards = to_reward_batch(results, pending.labels)
        return Generated(pending.records, pending.rollout, rewards, pending.groups, pending.ref_logp, pending.old_logp)

    @torch.no_grad()
    def _logprobs(self, model: torch.nn.Module, rollout: Rollout) -> Tensor:
        d = self.device
        temperature = self.cfg.rollout.temperature or 1.0
        out = []
        size = self.cfg.optim.micro_batch_size or rollout.size
        for s in range(0, rollout.size, size):
            r = rollout.select(range(s, min(s + size, rollout.size)))
            stats = response_logprobs(
                model, r.prompt_ids.to(d), r.prompt_mask.to(d), r.response_ids.to(d), r.response_mask.to(d), temperature
            )
            out.append(stats.logprobs.cpu())
        return torch.cat(out)

    def _frozen_logprobs(self, rollout: Rollout) -> tuple[Tensor | None, Tensor | None]:
        a = self.cfg.algorithm
        ref = self._logprobs(self.ref_model, rollout) if self.ref_model is not None else None
        off_policy = a.epochs * a.mini_batches > 1
        kl_in_reward = a.kl.where == "reward" and a.kl.coef > 0
        old = (
            self._logprobs(self.model, rollout)
            if (off_policy or kl_in_reward) and a.old_logprobs == "trainer"
            else None
        )
        if kl_in_reward and old is None:
            old = rollout.logprobs  # the ratio is anchored on the engine: so is the KL
        return ref, old

    def _collect(
        self, worker: Rewards, timing: dict[str, float]
    ) -> tuple[Generated, Generated, int, TokenStats | None]:
        """(everything generated, what is trained on, rounds, the first micro-batch's forward pass).

        The first two differ only with dynamic sampling. Without it, and when the update is a
        single optimizer step, the first micro-batch's forward pass (with its autograd graph) runs
        while the service is still scoring, so the reward latency hides behind it.
        """
        cfg = self.cfg
        P, G = cfg.rollout.prompts_per_step, cfg.rollout.group_size
        ds = cfg.algorithm.dynamic_sampling
        if not ds.enabled:
            pending = self._start_round(worker, self.stream.take(P), f"{self.step}-1", timing)
            single_update = cfg.algorithm.epochs * cfg.algorithm.mini_batches == 1
            prefetched = self._first_forward(pending.rollout, timing) if single_update else None
            gen = self._finish_round(pending, timing)
            return gen, gen, 1, prefetched
        generated: list[Generated] = []
        kept: list[Generated] = []
        kept_groups = 0
        rounds = 0
        while rounds < ds.max_rounds:
            rounds += 1
            gen = self._generate_and_score(worker, self.stream.take(P), f"{self.step}-{rounds}", timing)
            generated.append(gen)
            shaped, valid = self._shaped_rewards(gen)
            keep = ~zero_variance_groups(shaped.view(-1, G), valid.view(-1, G))
            keep &= torch.cumsum(keep.long(), 0) <= P - kept_groups  # no more than the batch needs
            if keep.any():
                kept.append(gen.select_groups(keep, G))
                kept_groups += int(keep.sum())
            if kept_groups >= P:
                break
        everything = merge_generated(generated, self.pad_id)
        if not kept:  # every group was uninformative: train on the last round (only the entropy term acts)
            kept = [generated[-1]]
        return everything, merge_generated(kept, self.pad_id), rounds, None

    def _first_forward(self, rollout: Rollout, timing: dict[str, float]) -> TokenStats:
        t = time.perf_counter()
        size = self.cfg.optim.micro_batch_size or rollout.size
        d = self.device
        r = rollout.select(range(min(size, rollout.size)))
        tokens = response_logprobs(
            self.model,
            r.prompt_ids.to(d),
            r.prompt_mask.to(d),
            r.response_ids.to(d),
            r.response_mask.to(d),
            self.cfg.rollout.temperature or 1.0,
            with_entropy=True,
        )
        timing["train"] += time.perf_counter() - t
        return tokens

    def _shaped_rewards(self, gen: Generated) -> tuple[Tensor, Tensor]:
        """Rewards as the advantages see them ([B]), and which samples enter the loss ([B] bool)."""
        rc = self.cfg.reward
        scores = gen.rewards.scores.clone()
        valid = gen.rewards.valid.clone()
        if rc.overlong is not None:
            scores = scores + overlong_penalty(
                gen.rollout.lengths, self.cfg.rollout.max_new_tokens, rc.overlong.buffer, rc.overlong.factor
            )
        if rc.mask_truncated:
            valid &= ~gen.rollout.truncated
        return torch.where(valid, scores, torch.zeros_like(scores)), valid

    def train_step(self, worker: Rewards) -> dict[str, Any]:
        cfg, a = self.cfg, self.cfg.algorithm
        G = cfg.rollout.group_size
        t0 = time.perf_counter()
        timing = {"generate": 0.0, "reward": 0.0, "train": 0.0, "latency": 0.0}
        everything, gen, rounds, prefetched = self._collect(worker, timing)
        t = time.perf_counter()
        shaped, valid = self._shaped_rewards(gen)
        ro = gen.rollout
        loss_mask = ro.response_mask & valid.unsqueeze(-1)
        penalty = None
        if a.kl.where == "reward" and a.kl.coef > 0 and gen.ref_logp is not None and gen.old_logp is not None:
            penalty = -a.kl.coef * kl_penalty(gen.old_logp, gen.ref_logp, a.kl.estimator) * ro.response_mask
        dense = dense_token_rewards(gen.rewards.steps, ro.response_mask)[0] if a.advantage == "prime" else None
        advantages = compute_advantages(a, shaped.view(-1, G), valid.view(-1, G), loss_mask, penalty, dense)
        d = self.device
        batch = TrainBatch(
            prompt_ids=ro.prompt_ids.to(d),
            prompt_mask=ro.prompt_mask.to(d),
            response_ids=ro.response_ids.to(d),
            response_mask=ro.response_mask.to(d),
            loss_mask=loss_mask.to(d),
            advantages=advantages.to(d),
            rollout_logp=ro.logprobs.to(d),
            old_logp=None
            if gen.old_logp is None or (a.epochs * a.mini_batches == 1 and penalty is None)
            else gen.old_logp.to(d),
            ref_logp=None if gen.ref_logp is None else gen.ref_logp.to(d),
        )
        lr = self.optimizer.param_groups[0]["lr"]
        result = policy_update(
            self.model,
            self.optimizer,
            batch,
            a,
            cfg.optim.micro_batch_size,
            cfg.optim.max_grad_norm,
            cfg.rollout.temperature or 1.0,
            a.aggregation_constant or cfg.rollout.max_new_tokens,
            prefetched=prefetched,
        )
        self.scheduler.step()
        self.engine.sync_weights()
        self.step += 1
        timing["train"] += time.perf_counter() - t
        step_time = time.perf_counter() - t0
        if cfg.debug.dump and self.step % cfg.debug.every == 0:
            self._dump(gen, shaped, valid, advantages, result.fresh_logp.cpu())
        row: dict[str, Any] = {"step": self.step}
        all_shaped, all_valid = self._shaped_rewards(everything)
        row.update(reward_metrics(everything, all_shaped, all_valid, overlong=self._overlong_mean(everything)))
        row.update(group_metrics(everything, G, rounds, kept=gen.rollout.size // G))
        row.update(actor_metrics(result.stats, result.grad_norms, lr, a.mismatch.tis_cap is not None))
        row.update(response_metrics(everything.rollout))
        tokens = int(everything.rollout.lengths.sum())
        row.update(
            {
                "perf/tokens_per_s": tokens / step_time,
                "perf/samples_per_s": everything.rollout.size / step_time,
                "time/generate_s": timing["generate"],
                "time/reward_s": timing["reward"],
                "time/train_s": timing["train"],
                "time/step_s": step_time,
                "reward/latency_s": timing["latency"],
            }
        )
        return row

    def _overlong_mean(self, gen: Generated) -> float:
        rc = self.cfg.reward
        if rc.overlong is None:
            return 0.0
        return float(
            overlong_penalty(
                gen.rollout.lengths, self.cfg.rollout.max_new_tokens, rc.overlong.buffer, rc.overlong.factor
            ).mean()
        )

    def _dump(self, gen: Generated, shaped: Tensor, valid: Tensor, advantages: Tensor, fresh: Tensor) -> None:
        G = self.cfg.rollout.group_size
        r = gen.rewards
        dump_step(
            self.run_dir,
            self.step,
            prompts=[rec.prompt for rec in gen.records for _ in range(G)],
            references=[rec.reference for rec in gen.records for _ in range(G)],
            groups=gen.groups,
            texts=gen.rollout.texts,
            response_ids=gen.rollout.response_ids,
            response_mask=gen.rollout.response_mask,
            rollout_logp=gen.rollout.logprobs,
            trainer_logp=fresh,
            reward={
                "score": r.scores.tolist(),
                "status": r.statuses,
                "error": r.errors,
                "details": r.details,
                "steps": r.steps,
                "verifier": r.labels,
            },
            shaped_reward=shaped,
            advantages=advantages,
            in_loss=valid,
            max_samples=self.cfg.debug.max_samples,
        )

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, worker: Rewards) -> dict[str, Any]:
        """Held-out reward, sampled (``eval.samples_per_prompt`` each) and greedy."""
        ec = self.cfg.eval
        records = self.eval_records[: ec.max_prompts] if ec.max_prompts else self.eval_records
        # a generator of its own, so evaluating never shifts the training samples (resume equality)
        saved = self.generator.get_state()
        self.generator.manual_seed(self.cfg.seed * 1_000_003 + self.step)
        try:
            temperature = ec.temperature if ec.temperature is not None else self.cfg.rollout.temperature
            sampled = self._eval_pass(worker, records, ec.samples_per_prompt, temperature)
            greedy = self._eval_pass(worker, records, 1, 0.0)
        finally:
            self.generator.set_state(saved)
        out = {
            "eval/reward_mean": sampled["mean"],
            "eval/greedy_reward_mean": greedy["mean"],
            "eval/response_length_mean": sampled["length"],
        }
        out.update({f"eval/verifier/{k}/mean": v for k, v in sampled["by_verifier"].items()})
        return out

    def _eval_pass(
        self, worker: Rewards, records: Sequence[PromptRecord], n: int, temperature: float
    ) -> dict[str, Any]:
        prompts = [self._tokens("eval", r) for r in records for _ in range(n)]
        rollout = self.engine.generate(prompts, replace(self._sampling(temperature)))
        samples, _, labels = self._samples(records, rollout.texts, n, f"eval-{self.step}")
        rewards = to_reward_batch(worker.submit(samples, self.cfg.reward.verifier).result().results, labels)
        return {
            "mean": ok_mean(rewards.scores, rewards.valid),
            "length": float(rollout.lengths.float().mean()),
            "by_verifier": reward_by_verifier(rewards),
        }


def _eval_line(row: dict[str, Any]) -> str:
    return f"reward {row['eval/reward_mean']:.3f} (greedy {row['eval/greedy_reward_mean']:.3f})"
