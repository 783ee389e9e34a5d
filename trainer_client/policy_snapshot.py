"""The policy's current weights, written where the reward service can load them.

PRIME's implicit process reward (``implicit_prm``: r_t = beta * log(pi_phi(y_t) / pi_ref(y_t)))
needs the policy being trained as pi_phi, but the service only knows models by folder. A config
value ``"$policy"`` in ``reward.dense`` stands for that folder: before each step's samples are
scored the trainer writes the policy's weights (LoRA merged, the trainer's dtype) to
``output_dir/policy/step_N``, with the tokenizer and config of the model it was loaded from, and
sends the spec with the path in place of the placeholder. Each step is a new folder, so the
service loads each step's weights once (it keeps a model by path for the life of its process: a
long run with an embedded service holds one copy per step); the previous step's folder is deleted
once the next one is written.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from .modeling import resolve_model_path
from .rollout.vllm_engine import policy_weights

__all__ = ["POLICY_PLACEHOLDER", "PolicySnapshots", "uses_policy", "with_policy", "write_policy"]

POLICY_PLACEHOLDER = "$policy"
"""A string value of a verifier config that the trainer replaces with the folder of the current policy."""

_WEIGHT_FILES = (".safetensors", ".bin", ".pt", ".gguf")
_KIT_MANIFEST = "rewardhub-model.json"


def uses_policy(spec: Any) -> bool:
    """Whether ``spec`` (a VerifierSpec as configured) names the current policy anywhere."""
    if isinstance(spec, str):
        return spec == POLICY_PLACEHOLDER
    if isinstance(spec, Mapping):
        return any(uses_policy(v) for v in spec.values())
    if isinstance(spec, list | tuple):
        return any(uses_policy(v) for v in spec)
    return False


def with_policy(spec: Any, path: str) -> Any:
    """``spec`` with every ``"$policy"`` value replaced by ``path``."""
    if isinstance(spec, str):
        return path if spec == POLICY_PLACEHOLDER else spec
    if isinstance(spec, Mapping):
        return {k: with_policy(v, path) for k, v in spec.items()}
    if isinstance(spec, list | tuple):
        return [with_policy(v, path) for v in spec]
    return spec


def write_policy(model: torch.nn.Module, tokenizer: Any, source: str | None, target: Path) -> None:
    """The policy as a Hugging Face folder: ``model.safetensors`` (LoRA merged), config and tokenizer.

    ``source`` is the folder the policy was loaded from (its config, tokenizer and chat template
    are copied unchanged, so the service renders prompts exactly as for the reference); a toy
    model (no source) saves its own config and tokenizer.
    """
    from safetensors.torch import save_file

    target.mkdir(parents=True, exist_ok=True)
    if source is not None:
        for item in Path(source).iterdir():
            if item.is_file() and not item.name.endswith(_WEIGHT_FILES) and item.name != _KIT_MANIFEST:
                shutil.copy2(item, target / item.name)
    else:
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        base.config.save_pretrained(target)
        tokenizer.save_pretrained(target)
    weights: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, tensor in policy_weights(model):
        if tensor.data_ptr() in seen:  # a tied matrix (lm_head = embeddings): the config's tie restores it
            continue
        seen.add(tensor.data_ptr())
        weights[name] = tensor.detach().contiguous().cpu()
    save_file(weights, str(target / "model.safetensors"), metadata={"format": "pt"})


class PolicySnapshots:
    """One folder per step under ``run_dir/policy``; only the newest is kept on disk."""

    def __init__(self, run_dir: Path, model: torch.nn.Module, tokenizer: Any, model_path: str | None) -> None:
        self.root = run_dir / "policy"
        self.model = model
        self.tokenizer = tokenizer
        self.source = resolve_model_path(model_path) if model_path else None
        self.current: tuple[int, Path] | None = None

    def publish(self, step: int) -> str:
        """The folder of the weights at ``step`` (written on the first call for that step)."""
        if self.current is not None and self.current[0] == step:
            return str(self.current[1])
        target = self.root / f"step_{step}"
        if target.exists():  # a resumed run writes the step again: the weights may differ
            shutil.rmtree(target)
        write_policy(self.model, self.tokenizer, self.source, target)
        if self.current is not None:
            shutil.rmtree(self.current[1], ignore_errors=True)
        self.current = (step, target)
        return str(target)
