"""Per-step dumps of every stage's data, for when the curves look wrong and you need the samples.

With ``debug.dump: true`` each dumped step writes ``output_dir/debug/step_NNNNNN.jsonl``: one
line per sample with the prompt, the response (text and token ids), the engine's log-probs, the
trainer's recomputed log-probs, the reward with its status, error, details and dense steps, the
shaped reward, the advantage of each token, and whether the sample entered the loss.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from torch import Tensor

from .generated import Generated

__all__ = ["dump_generated", "dump_step"]


def _row_values(t: Tensor, mask: Tensor, i: int, digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in t[i][mask[i]].tolist()]


def dump_step(
    run_dir: Path,
    step: int,
    prompts: Sequence[Any],
    references: Sequence[Any],
    groups: Sequence[str],
    texts: Sequence[str],
    response_ids: Tensor,  # [B, T]
    response_mask: Tensor,  # [B, T]
    rollout_logp: Tensor,  # [B, T]
    trainer_logp: Tensor,  # [B, T]
    reward: dict[str, Sequence[Any]],  # score, status, error, details, steps, label
    shaped_reward: Tensor,  # [B]
    advantages: Tensor,  # [B, T]
    in_loss: Tensor,  # [B] bool
    max_samples: int | None = None,
) -> Path:
    folder = run_dir / "debug"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"step_{step:06d}.jsonl"
    count = len(texts) if max_samples is None else min(max_samples, len(texts))
    with path.open("w") as handle:
        for i in range(count):
            mask = response_mask.bool()
            row = {
                "step": step,
                "index": i,
                "group": groups[i],
                "prompt": prompts[i],
                "reference": references[i],
                "response": texts[i],
                "response_ids": response_ids[i][mask[i]].tolist(),
                "rollout_logprobs": _row_values(rollout_logp, mask, i),
                "trainer_logprobs": _row_values(trainer_logp, mask, i),
                **{f"reward_{key}": values[i] for key, values in reward.items()},
                "shaped_reward": round(float(shaped_reward[i]), 6),
                "advantages": _row_values(advantages, mask, i),
                "in_loss": bool(in_loss[i]),
            }
            handle.write(json.dumps(row, default=str) + "\n")
    return path


def dump_generated(
    run_dir: Path,
    step: int,
    gen: Generated,
    group_size: int,
    shaped: Tensor,  # [B]
    in_loss: Tensor,  # [B] bool
    advantages: Tensor,  # [B, T]
    trainer_logp: Tensor,  # [B, T]
    max_samples: int | None = None,
) -> Path:
    """:func:`dump_step` of the samples a step trained on, with what the update made of them."""
    r = gen.rewards
    return dump_step(
        run_dir,
        step,
        prompts=[rec.prompt for rec in gen.records for _ in range(group_size)],
        references=[rec.reference for rec in gen.records for _ in range(group_size)],
        groups=gen.groups,
        texts=gen.rollout.texts,
        response_ids=gen.rollout.response_ids,
        response_mask=gen.rollout.response_mask,
        rollout_logp=gen.rollout.logprobs,
        trainer_logp=trainer_logp,
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
        in_loss=in_loss,
        max_samples=max_samples,
    )
