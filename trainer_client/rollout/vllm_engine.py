"""Rollouts with vLLM on the trainer's own GPU (colocated), weights pushed after every update.

Colocation: the engine takes ``rollout.gpu_memory_utilization`` of the GPU and, with
``rollout.sleep_between_steps``, releases its weights and KV cache (``LLM.sleep``) while the
trainer runs the update, waking before the next generation. After each update the trainer's
weights are loaded into the engine in place (LoRA adapters merged first), so the behaviour policy
is always the current policy up to the kernels' round-off, which ``rollout/mismatch_kl`` measures.

The log-probs are vLLM's own (``SamplingParams(logprobs=0)`` returns the sampled token's), taken
after temperature/top-k/top-p (``logprobs_mode="processed_logprobs"``).

Only vLLM's public ``LLM`` API is used, as of vLLM 0.11.1 (the ``gpu`` extra's minimum):
``sleep``/``wake_up``, ``apply_model`` for the weight load, ``reset_prefix_cache``, ``generate``;
tests/trainer/test_vllm_rollout_calls.py checks every call against that release's source. This
module imports vLLM when the engine is built, so the package works without it; the tests that
need a real engine are skipped without a GPU.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from ..config import TrainConfig
from .base import Rollout, SamplingParams, left_pad

__all__ = ["VLLMRolloutEngine", "policy_weights"]


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
    """A ``vllm.LLM`` in this process, sharing the GPU with the trainer."""

    def __init__(
        self, model: torch.nn.Module, tokenizer: Any, cfg: TrainConfig, generator: torch.Generator | None = None
    ) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise ImportError("rollout.engine: vllm needs vLLM and a GPU: pip install 'rewardhub[gpu]'") from exc
        # one process: weights can be loaded into the engine's model object directly
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self._vllm = vllm
        self.model = model
        self.tokenizer = tokenizer
        self.cfg = cfg
        self.pad_id = tokenizer.pad_token_id
        source = cfg.model.path or self._export_initial_policy(model, tokenizer, Path(cfg.output_dir))
        kwargs: dict[str, Any] = {
            "model": source,
            "tokenizer": source,
            "gpu_memory_utilization": cfg.rollout.gpu_memory_utilization,
            "dtype": cfg.model.dtype,
            "seed": cfg.seed,
            "enable_sleep_mode": cfg.rollout.sleep_between_steps,
            "max_model_len": cfg.data.max_prompt_tokens + cfg.rollout.max_new_tokens,
            "trust_remote_code": cfg.model.trust_remote_code,
        }
        # log-probabilities after temperature and top-p/top-k: the distribution the tokens were drawn from
        self.llm = vllm.LLM(**kwargs, logprobs_mode="processed_logprobs")
        self._asleep = False
        self.sync_weights()

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
        if self.cfg.rollout.sleep_between_steps and not self._asleep:
            self.llm.sleep(level=1)
            self._asleep = True

    def sync_weights(self) -> None:
        """Load the trainer's current weights into the engine."""
        self._wake()
        weights = list(policy_weights(self.model))

        def load(engine_model: Any) -> None:
            engine_model.load_weights(weights)

        # LLM.apply_model runs `load` on the model inside each worker (one, in this process: the
        # engine core is in-process, so the tensors are handed over, not serialised)
        self.llm.apply_model(load)
        self.llm.reset_prefix_cache()  # cached KV of old weights would be stale
        self._sleep()

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
