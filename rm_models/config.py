"""Configuration shared by every model-based verifier: which model, on which backend, how.

A model is named in the verifier's config (a model kit name such as ``smollm2-135m-instruct``,
a local path or a hub id) with the backend that runs it; :func:`backend_spec` is where a kit name
becomes its installed folder (see :mod:`rewardhub.models.kit`). Backends load each model once per process and keep it (see :mod:`rewardhub.models.backends`); the
fields that decide *what* is loaded form :class:`BackendSpec`, the cache key, while per-call
limits (``max_length``, ``batch_size``) stay out of it so they never cause a second load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from rewardhub.verifier import VerifierConfig

from .kit import resolve_model

__all__ = ["DEVICE_PATTERN", "BackendName", "BackendSpec", "JudgeConfig", "ModelConfig", "backend_spec"]

BackendName = Literal["transformers", "vllm", "openai"]
Dtype = Literal["auto", "float32", "float16", "bfloat16"]
DEVICE_PATTERN = r"^(auto|cpu|mps|cuda(:\d+)?)$"
"""The device strings a model config accepts; anything else is a 422 before any work starts."""


class ModelConfig(VerifierConfig):
    """Fields of every model verifier's ``Config``."""

    model: str = Field(
        description="A model kit name (`rewardhub models list`), a local path or a hub id of the model "
        "(for `openai`, the served model name)."
    )
    backend: BackendName = Field(
        "transformers",
        description="`transformers` (CPU or GPU), `vllm` (in-process engine, GPU) or `openai` (an OpenAI-compatible HTTP endpoint).",
    )
    device: str = Field(
        "auto",
        pattern=DEVICE_PATTERN,
        description="Torch device for `transformers`: `auto` (cuda when present, else cpu), `cpu`, `cuda`, `cuda:N`, `mps`.",
    )
    dtype: Dtype = Field(
        "auto",
        description="Weights dtype: `auto` is bfloat16 on a GPU that has it (float16 on older GPUs), float32 on CPU.",
    )
    trust_remote_code: bool = Field(
        False, description="Allow the model repository's own modelling code (needed by some PRMs)."
    )
    max_length: int = Field(
        4096, ge=8, description="Longest input in tokens; a longer sample is an error, never silently truncated."
    )
    batch_size: int = Field(16, ge=1, description="Most sequences per forward pass inside the backend.")
    gpu_memory_utilization: float = Field(
        0.4, gt=0, le=1, description="Share of GPU memory one vLLM engine may take (two engines for implicit_prm)."
    )
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs one vLLM engine spans.")
    base_url: str | None = Field(
        None,
        description="Base URL of the OpenAI-compatible endpoint, e.g. `http://localhost:8000/v1` (backend `openai`).",
    )
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", description="Environment variable holding the endpoint's API key; never put keys in configs."
    )
    request_timeout_s: float = Field(120.0, gt=0, description="Per HTTP request limit for backend `openai`.")
    max_concurrency: int = Field(16, ge=1, description="Requests in flight at once to an HTTP endpoint.")
    max_retries: int = Field(2, ge=0, description="Retries of an HTTP request after a connection error, 429 or 5xx.")

    @model_validator(mode="after")
    def _endpoint_has_url(self) -> ModelConfig:
        if self.backend == "openai" and not self.base_url:
            raise ValueError("backend 'openai' needs base_url, e.g. http://localhost:8000/v1")
        return self


class JudgeConfig(ModelConfig):
    """Generation settings shared by the judge and rubric verifiers."""

    backend: BackendName = Field(
        "openai", description="Where the judge runs; an OpenAI-compatible endpoint by default."
    )
    verdict: Literal["last_line", "choices", "logprobs"] = Field(
        "last_line",
        description=(
            "How the verdict is read: the judge's last line must be exactly a verdict word; `choices` constrains "
            "decoding to the verdict words; `logprobs` reads the verdict token's probability. Never by substring."
        ),
    )
    system_prompt: str | None = Field(None, description="Optional system message sent before the judge prompt.")
    max_tokens: int = Field(1024, ge=1, description="Most tokens the judge may generate (1 is used for `logprobs`).")
    temperature: float = Field(
        0.0,
        ge=0,
        description="Sampling temperature of the judge's `last_line` replies; 0 is greedy. `logprobs` and `choices` read the judge's distribution itself, so they are greedy at any temperature.",
    )
    top_logprobs: int = Field(20, ge=1, le=20, description="Alternatives per token requested in `logprobs` mode.")
    chat_template: bool = Field(
        True,
        description="Ask through the model's chat template. `false`: the judge prompt as plain text ending in "
        "`Answer:` (a completion), for a base model without a chat template; its verdict is then read by "
        "`choices` or `logprobs`.",
    )

    @model_validator(mode="after")
    def _plain_prompt_needs_a_short_verdict(self) -> JudgeConfig:
        # a base model continues a completion past its verdict (another question, another answer),
        # so a verdict read from its last line would be whatever it rambled into
        if not self.chat_template and self.verdict == "last_line":
            raise ValueError(
                "chat_template: false asks a completion, which a base model continues past its verdict: "
                "read the verdict with verdict 'choices' or 'logprobs'"
            )
        return self


@dataclass(frozen=True)
class BackendSpec:
    """What identifies one loaded model in a process: the cache key of the backends."""

    backend: BackendName
    model: str
    device: str = "auto"
    dtype: Dtype = "auto"
    trust_remote_code: bool = False
    gpu_memory_utilization: float = 0.4
    tensor_parallel_size: int = 1
    base_url: str | None = None
    api_key_env: str | None = None
    request_timeout_s: float = 120.0
    max_concurrency: int = 16
    max_retries: int = 2


def backend_spec(config: ModelConfig, model: str | None = None) -> BackendSpec:
    """The spec of ``config``'s model, or of another ``model`` with the same options (a reference LM).

    A model kit name becomes its installed folder here, for every verifier and backend alike; a
    kit model that is not installed raises :class:`~rewardhub.models.kit.ModelNotInstalled`
    (that sample's error), never a fallback. An ``openai`` model is the endpoint's name for it."""
    name = model or config.model
    return BackendSpec(
        backend=config.backend,
        model=name if config.backend == "openai" else resolve_model(name),
        device=config.device,
        dtype=config.dtype,
        trust_remote_code=config.trust_remote_code,
        gpu_memory_utilization=config.gpu_memory_utilization,
        tensor_parallel_size=config.tensor_parallel_size,
        base_url=config.base_url,
        api_key_env=config.api_key_env,
        request_timeout_s=config.request_timeout_s,
        max_concurrency=config.max_concurrency,
        max_retries=config.max_retries,
    )
