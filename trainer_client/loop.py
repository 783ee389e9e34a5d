"""The training loop: generate, score, compute advantages, update, log; repeat.

One step:

1. draw P prompts and sample G responses each with the rollout engine, which records its own
   log-probs (the behaviour policy); chunks are sent for scoring as soon as they are generated
   (:mod:`rewardhub.trainer.rounds`);
2. while the service scores, compute what the update needs from frozen models (reference
   log-probs; the pre-update log-probs when the update is off-policy or KL goes in the reward),
   and the first micro-batch's forward pass when the update is a single optimizer step;
3. collect the results; samples the service could not judge are masked out of the loss; with
   DAPO dynamic sampling, groups with equal rewards are dropped and more prompts sampled
   (:mod:`rewardhub.trainer.dynamic_sampling`);
4. shape the rewards (overlong penalty, KL), compute advantages (:mod:`rewardhub.trainer.train_batch`),
   run the policy update (:mod:`rewardhub.trainer.update`), sync the engine's weights;
5. write the step's metrics (:mod:`rewardhub.trainer.step_metrics`), dumps
   (:mod:`rewardhub.trainer.dumps`), evaluations (:mod:`rewardhub.trainer.evaluation`), checkpoints.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import yaml
from rich.console import Console

from .checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .data import PromptStream, PromptTokens, load_records
from .dumps import dump_generated
from .dynamic_sampling import Collected, informative_rounds
from .evaluation import Evaluator, eval_line
from .logprobs import first_micro_batch
from .metrics import MetricsWriter
from .modeling import frozen_copy, load_policy
from .optim import build_optimizer, build_scheduler
from .progress import StepReporter
from .rewards import RewardProcess, RewardWorker, ScorerFactory, service_scorer
from .rollout import HFRolloutEngine, RolloutEngine
from .rounds import Rounds
from .step_metrics import step_row
from .timing import StepTiming
from .train_batch import build_train_batch
from .update import policy_update

__all__ = ["Trainer", "reward_service"]

Rewards = RewardWorker | RewardProcess
"""Where scoring requests go: a thread of this process, or a child process (the default)."""


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
        self.train_records = load_records(cfg.data, "train")
        self.eval_records = load_records(cfg.data, "eval")
        prompts = PromptTokens(self.tokenizer, cfg.data.max_prompt_tokens)
        self.rounds = Rounds(cfg, self.engine, prompts, self.model, self.ref_model, self.device)
        self.evaluator = Evaluator(cfg, self.engine, prompts, self.generator, self.eval_records)
        self.stream = PromptStream(self.train_records, cfg.seed, cfg.data.shuffle)
        self.step = 0

    # ------------------------------------------------------------------ set-up
    def _build_engine(self) -> RolloutEngine:
        if self.cfg.rollout.engine == "vllm":
            from .rollout.vllm_engine import VLLMRolloutEngine

            return VLLMRolloutEngine(self.model, self.tokenizer, self.cfg, self.generator)
        return HFRolloutEngine(self.model, self.tokenizer, self.generator, lean=self.cfg.rollout.lean_decoder)

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
                reporter.note(f"eval before training: {eval_line(first)}")
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

    # ------------------------------------------------------------------ one step
    def train_step(self, worker: Rewards) -> dict[str, Any]:
        """Collect the step's samples, compute their advantages, update the policy; the metrics row."""
        cfg = self.cfg
        t0 = time.perf_counter()
        timing = StepTiming()
        collected = self._collect(worker, timing)
        with timing.phase("train"):
            prepared = build_train_batch(collected.kept, cfg, self.device)
            lr = self.optimizer.param_groups[0]["lr"]
            result = policy_update(
                self.model,
                self.optimizer,
                prepared.batch,
                cfg.algorithm,
                cfg.optim.micro_batch_size,
                cfg.optim.max_grad_norm,
                cfg.rollout.temperature or 1.0,
                cfg.algorithm.aggregation_constant or cfg.rollout.max_new_tokens,
                prefetched=collected.prefetched,
            )
            self.scheduler.step()
            self.engine.sync_weights()
            self.step += 1
        step_time = time.perf_counter() - t0
        if cfg.debug.dump and self.step % cfg.debug.every == 0:
            dump_generated(
                self.run_dir,
                self.step,
                collected.kept,
                cfg.rollout.group_size,
                prepared.shaped,
                prepared.valid,
                prepared.advantages,
                result.fresh_logp.cpu(),
                cfg.debug.max_samples,
            )
        return step_row(
            cfg, self.step, collected.everything, collected.kept, collected.rounds, result, lr, timing, step_time
        )

    def _collect(self, worker: Rewards, timing: StepTiming) -> Collected:
        """The step's samples: one round, or dynamic sampling's rounds.

        With one round and a single optimizer step, the update's first forward pass (with its
        autograd graph) runs while the service is still scoring, so the reward latency hides behind it.
        """
        cfg = self.cfg
        if cfg.algorithm.dynamic_sampling.enabled:
            return informative_rounds(self.rounds, self.stream, worker, self.step, timing)
        pending = self.rounds.start(worker, self.stream.take(cfg.rollout.prompts_per_step), f"{self.step}-1", timing)
        prefetched = None
        if cfg.algorithm.epochs * cfg.algorithm.mini_batches == 1:
            with timing.phase("train"):
                prefetched = first_micro_batch(
                    self.model, pending.rollout, cfg.optim.micro_batch_size, cfg.rollout.temperature or 1.0, self.device
                )
        generated = pending.collect(timing)
        return Collected(generated, generated, 1, prefetched)

    def evaluate(self, worker: Rewards) -> dict[str, Any]:
        """Held-out reward at the current step (:class:`~rewardhub.trainer.evaluation.Evaluator`)."""
        return self.evaluator.evaluate(worker, self.step)

    # ------------------------------------------------------------------ schedule and checkpoints
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
