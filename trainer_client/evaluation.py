"""Held-out evaluation: the reward on ``data.eval``, sampled and greedy, without disturbing training.

``eval.metrics`` adds more verdicts on the same responses, each scored by the service like the
reward (the trainer never judges a response itself): a reward that can be gamed shows up as a
reward that climbs while a strict reading (``exact`` on the last number, say) does not. With
``debug.dump`` every held-out response is written with all its verdicts, so both can be read.

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
from .dumps import dump_eval
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
            sampled = self._pass(channel, step, ec.samples_per_prompt, temperature, "sampled")
            greedy = self._pass(channel, step, 1, 0.0, "greedy")
        finally:
            self.generator.set_state(saved)
        out = {
            "eval/reward_mean": sampled["mean"],
            "eval/greedy_reward_mean": greedy["mean"],
            "eval/response_length_mean": sampled["length"],
        }
        out.update({f"eval/verifier/{k}/mean": v for k, v in sampled["by_verifier"].items()})
        for name in ec.metrics:
            out[f"eval/metric/{name}/mean"] = sampled["metrics"][name]
            out[f"eval/metric/{name}/greedy_mean"] = greedy["metrics"][name]
        return out

    def _pass(self, channel: RewardChannel, step: int, n: int, temperature: float, mode: str) -> dict[str, Any]:
        prompts = [self.prompts("eval", r) for r in self.records for _ in range(n)]
        rollout = self.engine.generate(prompts, sampling_params(self.cfg.rollout, temperature))
        samples, _, labels = as_samples(self.records, rollout.texts, n, f"eval-{step}", self.cfg.reward.verifier)
        reward_future = channel.submit(samples, self.cfg.reward.verifier)
        # a metric's spec judges every sample, whatever verifier its record names for the reward
        unnamed = [s.model_copy(update={"verifier": None}) for s in samples]
        metric_futures = {name: channel.submit(unnamed, spec) for name, spec in self.cfg.eval.metrics.items()}
        rewards = to_reward_batch(reward_future.result().results, labels)
        metrics = {
            name: to_reward_batch(future.result().results, [name] * len(samples))
            for name, future in metric_futures.items()
        }
        if self.cfg.debug.dump:
            records = [r for r in self.records for _ in range(n)]
            dump_eval(self.cfg, step, mode, records, rollout.texts, rewards, metrics)
        return {
            "mean": ok_mean(rewards.scores, rewards.valid),
            "length": float(rollout.lengths.float().mean()),
            "by_verifier": reward_by_verifier(rewards),
            "metrics": {name: ok_mean(batch.scores, batch.valid) for name, batch in metrics.items()},
        }


def eval_line(row: dict[str, Any]) -> str:
    """One line for the console: the sampled and greedy held-out reward, and each ``eval.metrics``."""
    line = f"reward {row['eval/reward_mean']:.3f} (greedy {row['eval/greedy_reward_mean']:.3f})"
    for key in sorted(k for k in row if k.startswith("eval/metric/") and k.endswith("/mean")):
        name = key.removeprefix("eval/metric/").removesuffix("/mean")
        line += f", {name} {row[key]:.3f} (greedy {row[f'eval/metric/{name}/greedy_mean']:.3f})"
    return line
