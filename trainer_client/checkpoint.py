"""Checkpoints that resume bit for bit: weights, optimizer, scheduler, every RNG, data position.

A checkpoint is a directory ``output_dir/checkpoints/step_NNNNNN`` holding ``state.pt`` (all the
training state) and ``policy/`` (the policy in ``save_pretrained`` form, ready to load or serve).
Resuming restores the step counter, the prompt stream's position and the sampling generator, so
the resumed run draws the same prompts and the same samples as the uninterrupted run would
(tests/trainer/test_checkpoint.py: 2 + 2 steps equal 4).
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from .data import StreamPosition

if TYPE_CHECKING:
    from .loop import Trainer

__all__ = ["CheckpointState", "latest_checkpoint", "load_checkpoint", "save_checkpoint"]

_NAME = re.compile(r"^step_(\d+)$")


@dataclass(frozen=True)
class CheckpointState:
    step: int
    position: StreamPosition
    path: Path


def _rng_state(generator: torch.Generator) -> dict[str, Any]:
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "sampling": generator.get_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _restore_rng(state: dict[str, Any], generator: torch.Generator) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    generator.set_state(state["sampling"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(trainer: Trainer) -> Path:
    """Write the checkpoint of the trainer's current step (atomically: a half-written one is never
    "latest"), keeping the latest ``checkpoint.keep``."""
    t = trainer
    root = t.run_dir / "checkpoints"
    final = root / f"step_{t.step:06d}"
    tmp = root / f".tmp_step_{t.step:06d}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    position = t.stream.position
    torch.save(
        {
            "step": t.step,
            "model": t.model.state_dict(),
            "optimizer": t.optimizer.state_dict(),
            "scheduler": t.scheduler.state_dict(),
            "position": {"epoch": position.epoch, "offset": position.offset},
            "rng": _rng_state(t.generator),
        },
        tmp / "state.pt",
    )
    if hasattr(t.model, "save_pretrained"):
        _export_policy(t.model, t.tokenizer, tmp / "policy")
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in _checkpoints(root)[: -t.cfg.checkpoint.keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _export_policy(model: Any, tokenizer: Any, target: Path) -> None:
    """``save_pretrained`` without its progress bar (it would break the trainer's own)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(target)
        if tokenizer is not None:
            tokenizer.save_pretrained(target)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _checkpoints(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _NAME.match(p.name)) and (p / "state.pt").exists()]
    return [p for _, p in sorted(found)]


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = _checkpoints(run_dir / "checkpoints")
    return found[-1] if found else None


def load_checkpoint(path: Path, trainer: Trainer) -> CheckpointState:
    """Restore the weights, optimizer, scheduler and every RNG :func:`save_checkpoint` wrote into
    the trainer; its step and prompt position are returned, for the trainer to take up."""
    state = torch.load(path / "state.pt", map_location="cpu", weights_only=False)
    trainer.model.load_state_dict(state["model"])
    trainer.optimizer.load_state_dict(state["optimizer"])
    trainer.scheduler.load_state_dict(state["scheduler"])
    _restore_rng(state["rng"], trainer.generator)
    return CheckpointState(step=int(state["step"]), position=StreamPosition(**state["position"]), path=path)
