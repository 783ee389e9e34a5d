"""Held-out evaluation: the reward on ``data.eval``, sampled and greedy, without disturbing training.

Sampling uses the trainer's generator reseeded from ``(seed, step)`` and restored afterwards, so
evaluating (or not) never changes the training samples: a resumed run and an uninterrupted one
stay equal, whatever ``eval.every`` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from rewardhub.background import RewardChannel

from .config import TrainConfig
from .data import PromptRecord, PromptTokens
from .rewards import to_reward_batch
from .rollout import RolloutEngine
from .rounds import as_samples, sampling_params
from .step_metrics import ok_mean, reward_by_verifier

__all__ = ["Evaluator", "eval_line"]


class Evaluator:
    """Scores the policy on the held-out prompts (``eval.max_prompts`` of them at most)."""

    def __init__(
        self,
        cfg: TrainConfig,
        engine: RolloutEngine,
        prompts: PromptTokens,
        generator: torch.Generator,
        records: Sequence[PromptRecord],
    ) -> None:
        self.cfg = cfg
        self.engine = engine
        self.prompts = prompts
        self.generator = generator
        self.records = list(records[: cfg.eval.max_prompts] if cfg.eval.max_prompts else records)

    def evaluate(self, channel: RewardChannel, step: int) -> dict[str, Any]:
        """Held-out reward, sampled (``eval.samples_per_prompt`` each) and greedy: the ``eval/*`` metrics."""
        ec = self.cfg.eval
        saved = self.generator.get_state()
        self.generator.manual_seed(self.cfg.seed * 1_000_003 + step)
        try:
            temperature = ec.temperature if ec.temperature is not None else self.cfg.rollout.temperature
            sampled = self._pass(channel, step, ec.samples_per_prompt, temperature)
            greedy = self._pass(channel, step, 1, 0.0)
        finally:
            self.generator.set_state(saved)
        out = {
            "eval/reward_mean": sampled["mean"],
            "eval/greedy_reward_mean": greedy["mean"],
            "eval/response_length_mean": sampled["length"],
        }
        out.update({f"eval/verifier/{k}/mean": v for k, v in sampled["by_verifier"].items()})
        return out

    def _pass(self, channel: RewardChannel, step: int, n: int, temperature: float) -> dict[str, Any]:
        prompts = [self.prompts("eval", r) for r in self.records for _ in range(n)]
        rollout = self.engine.generate(prompts, sampling_params(self.cfg.rollout, temperature))
        samples, _, labels = as_samples(self.records, rollout.texts, n, f"eval-{step}", self.cfg.reward.verifier)
        rewards = to_reward_batch(channel.submit(samples, self.cfg.reward.verifier).result().results, labels)
        return {
            "mean": ok_mean(rewards.scores, rewards.valid),
            "length": float(rollout.lengths.float().mean()),
            "by_verifier": reward_by_verifier(rewards),
        }


def eval_line(row: dict[str, Any]) -> str:
    """One line for the console: the sampled and greedy held-out reward."""
    return f"reward {row['eval/reward_mean']:.3f} (greedy {row['eval/greedy_reward_mean']:.3f})"
