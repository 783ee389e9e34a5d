"""Per-step dumps of every stage's data, for when the curves look wrong and you need the samples.

With ``debug.dump: true`` each dumped step writes ``output_dir/debug/step_NNNNNN.jsonl``: one
line per sample with the prompt, the response (text and token ids), the engine's log-probs, the
trainer's recomputed log-probs, the reward with its status, error, details and dense steps, the
shaped reward, the advantage of each token, and whether the sample entered the loss.

Each evaluation writes ``output_dir/debug/eval_step_NNNNNN.jsonl`` too: every held-out response,
sampled and greedy, with the reward's verdict and each ``eval.metrics`` verdict, so a held-out
number can be checked against the responses it was computed from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from torch import Tensor

from .config import TrainConfig
from .data import PromptRecord
from .generated import StepBatch
from .rewards import RewardBatch
from .update import UpdateResult

__all__ = ["dump_eval", "dump_step"]


def _row_values(t: Tensor, mask: Tensor, i: int, digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in t[i][mask[i]].tolist()]


def dump_step(cfg: TrainConfig, step: int, batch: StepBatch, update: UpdateResult) -> Path:
    """The samples ``batch`` trained on, with what the update made of them (``debug.max_samples`` at most)."""
    gen = batch.kept
    assert batch.advantages is not None, "dumped before the advantages were computed"
    G, max_samples = cfg.rollout.group_size, cfg.debug.max_samples
    prompts = [rec.prompt for rec in gen.records for _ in range(G)]
    references = [rec.reference for rec in gen.records for _ in range(G)]
    r = gen.rewards
    reward = {
        "score": r.scores.tolist(),
        "status": r.statuses,
        "error": r.errors,
        "details": r.details,
        "steps": r.steps,
        "verifier": r.labels,
    }
    ro, trainer_logp = gen.rollout, update.fresh_logp.cpu()
    folder = Path(cfg.output_dir) / "debug"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"step_{step:06d}.jsonl"
    count = ro.size if max_samples is None else min(max_samples, ro.size)
    mask = ro.response_mask.bool()
    with path.open("w") as handle:
        for i in range(count):
            row = {
                "step": step,
                "index": i,
                "group": gen.groups[i],
                "prompt": prompts[i],
                "reference": references[i],
                "response": ro.texts[i],
                "response_ids": ro.response_ids[i][mask[i]].tolist(),
                "rollout_logprobs": _row_values(ro.logprobs, mask, i),
                "trainer_logprobs": _row_values(trainer_logp, mask, i),
                **{f"reward_{key}": values[i] for key, values in reward.items()},
                "shaped_reward": round(float(gen.shaped.rewards[i]), 6),
                "advantages": _row_values(batch.advantages, mask, i),
                "in_loss": bool(gen.shaped.in_loss[i]),
            }
            handle.write(json.dumps(row, default=str) + "\n")
    return path


def _verdict(batch: RewardBatch, i: int) -> dict[str, object]:
    return {
        "score": float(batch.scores[i]),
        "status": batch.statuses[i],
        "error": batch.errors[i],
        "details": batch.details[i],
    }


def dump_eval(
    cfg: TrainConfig,
    step: int,
    mode: str,
    records: Sequence[PromptRecord],
    texts: Sequence[str],
    reward: RewardBatch,
    metrics: Mapping[str, RewardBatch],
) -> Path:
    """The held-out responses of one evaluation pass (``mode``: sampled or greedy), appended to the step's file."""
    folder = Path(cfg.output_dir) / "debug"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"eval_step_{step:06d}.jsonl"
    with path.open("a") as handle:
        for i, (record, text) in enumerate(zip(records, texts, strict=True)):
            row = {
                "step": step,
                "mode": mode,
                "index": i,
                "prompt": record.prompt,
                "reference": record.reference,
                "response": text,
                "reward": _verdict(reward, i),
                "metrics": {name: _verdict(batch, i) for name, batch in metrics.items()},
            }
            handle.write(json.dumps(row, default=str) + "\n")
    return path
