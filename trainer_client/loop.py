"""The training loop: evaluate, train step after step, evaluate and checkpoint.

:class:`Trainer` owns the policy, the optimizer, the rollout engine and the data; :meth:`Trainer.run`
opens the run's reward channel (:func:`~rewardhub.trainer.rewards.reward_channel`), evaluates
before training, and repeats :func:`rewardhub.trainer.step.train_step` (collect, keep informative
groups, advantages, update: read that module for what one step does), writing each step's metrics
(:mod:`rewardhub.trainer.metrics`), held-out evaluations (:mod:`rewardhub.trainer.evaluation`)
and checkpoints (:mod:`rewardhub.trainer.checkpoint`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch
import yaml
from rich.console import Console

from rewardhub.background import RewardChannel, RewardSourceFactory

from .checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .data import PromptStream, PromptTokens, load_records
from .evaluation import Evaluator, eval_line
from .metrics import MetricsWriter
from .modeling import frozen_copy, load_policy
from .optim import build_optimizer, build_scheduler
from .progress import StepReporter
from .rewards import reward_channel
from .rollout import HFRolloutEngine, RolloutEngine
from .rounds import Rounds
from .step import train_step

__all__ = ["Trainer"]


class Trainer:
    """Owns the policy, optimizer, engine and data; :meth:`run` trains ``cfg.steps`` steps.

    ``scorer`` replaces the reward service (tests, offline experiments): a factory of async
    context managers yielding an object with ``async score(samples, verifier)``.
    """

    def __init__(
        self, cfg: TrainConfig, scorer: RewardSourceFactory | None = None, console: Console | None = None
    ) -> None:
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
            channel = stack.enter_context(reward_channel(cfg, self._scorer))
            self._resume(writer)
            reporter = StepReporter(cfg.steps, self.step, cfg.logging.progress, self.console)
            stack.callback(reporter.close)
            if self.step == 0 and self.eval_records:
                first = self.evaluate(channel)
                writer.write_eval({"step": 0, **first})
                reporter.note(f"eval before training: {eval_line(first)}")
            while self.step < cfg.steps:
                row = self.train_step(channel)
                if self.eval_records and self._due(cfg.eval.every):
                    evaluation = self.evaluate(channel)
                    writer.write_eval({"step": self.step, **evaluation})
                    row.update(evaluation)
                writer.write(row)
                rows.append(row)
                reporter.update(row)
                ck = cfg.checkpoint
                if (ck.every and self.step % ck.every == 0) or (self.step == cfg.steps and ck.save_final):
                    self.save()
        return rows

    def close(self) -> None:
        """Release the rollout engine (a vLLM engine's processes); the trainer cannot roll out after."""
        close = getattr(self.engine, "close", None)
        if close is not None:
            close()

    # ------------------------------------------------------------------ one step
    def train_step(self, channel: RewardChannel) -> dict[str, Any]:
        """One step (:func:`rewardhub.trainer.step.train_step`); the metrics row."""
        return train_step(self, channel)

    def evaluate(self, channel: RewardChannel) -> dict[str, Any]:
        """Held-out reward at the current step (:class:`~rewardhub.trainer.evaluation.Evaluator`)."""
        return self.evaluator.evaluate(channel, self.step)

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
        state = load_checkpoint(path, self)
        self.step = state.step
        self.stream.position = state.position
        self.engine.sync_weights()
        writer.truncate_after(self.step)

    def save(self) -> Path:
        return save_checkpoint(self)
