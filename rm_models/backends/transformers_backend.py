"""Hugging Face transformers backend: any model on CPU or one GPU, loaded lazily, once.

One backend object per model (see ``get_backend``) holds the tokenizer and up to three heads of
that checkpoint, each loaded on first use: a sequence classifier (outcome RMs), a token
classifier (Qwen2.5-Math-PRM style PRMs) and a causal LM (Math-Shepherd PRMs, implicit PRMs,
small judges).

Scoring batches are sorted by length and right-padded, so a sample's positions are the same
alone or in a batch and each row is read at its own positions; generation left-pads (see
:mod:`~rewardhub.models.backends.padding` and :mod:`~rewardhub.models.backends.generation`).
What keeps a GPU healthy under a long-running service:

- weights in bfloat16 on a GPU (see :mod:`~rewardhub.models.backends.placement`), every
  forward pass under ``torch.inference_mode`` with the KV cache off (a scoring pass never
  reuses it, and it would hold every layer's keys and values until the pass ends);
- logits computed only at the positions that are read (``logits_to_keep``) and turned to
  float32 one row at a time, so a long batch never holds a [batch, length, vocabulary]
  float32 tensor;
- nothing of a batch outlives it (answers leave as Python floats); a chunk that runs out of
  GPU memory is retried in halves, down to one sequence, and only a single sequence that does
  not fit is that sample's error.

What it does not do is share the GPU with vLLM in one process or split a model over devices.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import torch

from ..config import BackendSpec
from ..errors import BackendError
from .base import Backend, ChatReply, ChatRequest
from .chunking import run_in_chunks, split_rows
from .generation import chat_replies
from .padding import longest_first, right_pad
from .placement import (
    DevicePlacementError,
    resolve_device,
    resolve_dtype,
    should_release_cache,
)

__all__ = ["TransformersBackend"]

Head = Literal["sequence", "token", "causal"]
T = TypeVar("T")


class TransformersBackend(Backend):
    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        cuda_devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
        mps = getattr(torch.backends, "mps", None)
        try:
            device = resolve_device(spec.device, cuda_devices, bool(mps and mps.is_available()))
        except DevicePlacementError as exc:
            raise BackendError(str(exc)) from exc
        self.device = torch.device(device)
        bf16 = self.device.type == "cuda" and torch.cuda.is_bf16_supported()
        self.dtype = getattr(torch, resolve_dtype(spec.dtype, self.device.type, bf16))
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._models: dict[Head, Any] = {}

    def describe(self) -> dict[str, Any]:
        """The base identity with the dtype and device actually used (``auto`` resolved)."""
        return {**super().describe(), "dtype": str(self.dtype).removeprefix("torch."), "device": str(self.device)}

    # ---- loading -------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def _load_tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.spec.model, trust_remote_code=self.spec.trust_remote_code)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load tokenizer of {self.spec.model!r}: {exc}") from exc

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return 0 if pad is None else int(pad)

    def model(self, head: Head) -> Any:
        model = self._models.get(head)
        if model is None:
            with self._lock:
                model = self._models.get(head)
                if model is None:
                    model = self._models[head] = self._load_model(head)
        return model

    def _load_model(self, head: Head) -> Any:
        import transformers

        auto_classes = {
            "sequence": transformers.AutoModelForSequenceClassification,
            "token": transformers.AutoModelForTokenClassification,
            "causal": transformers.AutoModelForCausalLM,
        }
        options = {"dtype": self.dtype, "trust_remote_code": self.spec.trust_remote_code}
        try:
            cls = auto_classes[head]
            if head == "token" and self.spec.trust_remote_code:
                # Remote-code PRMs (Qwen2.5-Math-PRM) register their class under AutoModel only.
                auto_map = getattr(
                    transformers.AutoConfig.from_pretrained(self.spec.model, **options), "auto_map", None
                )
                if auto_map and "AutoModel" in auto_map and "AutoModelForTokenClassification" not in auto_map:
                    cls = transformers.AutoModel
            model = cls.from_pretrained(self.spec.model, **options)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load {self.spec.model!r} as a {head} model: {exc}") from exc
        try:
            return model.to(self.device).eval()
        except torch.cuda.OutOfMemoryError:
            pass  # leave the handler first, so the half-moved weights can be freed
        del model
        self.release_cache(force=True)
        raise BackendError(f"{self.spec.model!r} does not fit in the free memory of {self.device}")

    # ---- batching ------------------------------------------------------------------------

    def _map(
        self,
        batch: Sequence[Sequence[int]],
        batch_size: int,
        run: Callable[[torch.Tensor, torch.Tensor, list[int]], list[T]],
    ) -> list[T]:
        """``run(ids, mask, rows)`` per right-padded chunk (``rows``: indices into ``batch``);
        the answers in input order."""
        if any(len(seq) == 0 for seq in batch):
            raise BackendError("cannot run a model on an empty token sequence")

        def attempt(rows: list[int]) -> list[T]:
            ids, mask = right_pad([batch[i] for i in rows], self.pad_id)
            return run(ids.to(self.device), mask.to(self.device), rows)

        def describe(rows: list[int]) -> str:
            return f"one sequence of {len(batch[rows[0]])} tokens"

        with torch.inference_mode():
            done = run_in_chunks(longest_first(batch), batch_size, attempt, self.release_cache, describe)
        self.release_cache()
        return [done[i] for i in range(len(batch))]

    def release_cache(self, force: bool = False) -> None:
        """Hand the allocator's unused GPU memory back when it matters (see placement)."""
        if self.device.type != "cuda":
            return
        if force or should_release_cache(
            torch.cuda.memory_reserved(self.device), torch.cuda.memory_allocated(self.device)
        ):
            torch.cuda.empty_cache()

    # ---- operations ----------------------------------------------------------------------

    def classify(self, batch: Sequence[Sequence[int]], batch_size: int) -> list[list[float]]:
        model = self.model("sequence")

        def run(ids: torch.Tensor, mask: torch.Tensor, rows: list[int]) -> list[list[float]]:
            lengths = [len(batch[i]) for i in rows]
            return self._sequence_logits(model, ids, mask, lengths).float().cpu().tolist()

        return self._map(batch, batch_size, run)

    def _sequence_logits(self, model: Any, ids: torch.Tensor, mask: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        """[B, labels] logits read at each sequence's last real token.

        Decoder classifiers find "the last token" by looking for the pad id, which goes wrong when
        the pad id is also the end-of-turn token a chat template puts last. Reading the head at
        the known length is exact, so that is done whenever the model has the usual
        ``base_model`` + ``score`` layout; other classifiers use their own pooling.
        """
        score = getattr(model, "score", None)
        base = getattr(model, "base_model", None)
        if isinstance(score, torch.nn.Module) and base is not None and base is not model:
            hidden = base(input_ids=ids, attention_mask=mask, **_no_cache(base)).last_hidden_state
            last = torch.tensor([n - 1 for n in lengths], device=hidden.device)
            return score(hidden[torch.arange(len(lengths), device=hidden.device), last])
        return model(input_ids=ids, attention_mask=mask, **_no_cache(model)).logits

    def step_label_probs(self, batch: Sequence[Sequence[int]], tag_id: int, batch_size: int) -> list[list[list[float]]]:
        model = self.model("token")

        def run(ids: torch.Tensor, mask: torch.Tensor, rows: list[int]) -> list[list[list[float]]]:
            out = model(input_ids=ids, attention_mask=mask, **_no_cache(model))
            logits = out.logits if hasattr(out, "logits") else out[0]  # [B, T, labels]
            hits = ids == tag_id  # [B, T]
            picked = logits[hits].float().softmax(dim=-1).cpu()  # [tags in the chunk, labels]
            return split_rows(picked.tolist(), hits.sum(-1).tolist())

        return self._map(batch, batch_size, run)

    def step_token_probs(
        self, batch: Sequence[Sequence[int]], tag_id: int, candidate_ids: Sequence[int], batch_size: int
    ) -> list[list[list[float]]]:
        model = self.model("causal")
        candidates = torch.tensor(list(candidate_ids), device=self.device)

        def run(ids: torch.Tensor, mask: torch.Tensor, rows: list[int]) -> list[list[list[float]]]:
            hits = ids == tag_id  # [B, T]
            columns = hits.any(0).nonzero().squeeze(-1)  # [K]: every position holding a tag in some row
            logits = self._causal_logits(model, ids, mask, columns)  # [B, K, V]
            picked = logits.index_select(-1, candidates).float().softmax(dim=-1)  # [B, K, C]
            at_tags = hits[:, columns]  # [B, K]
            return split_rows(picked[at_tags].cpu().tolist(), at_tags.sum(-1).tolist())

        return self._map(batch, batch_size, run)

    def token_logprobs(
        self, batch: Sequence[Sequence[int]], starts: Sequence[int], batch_size: int
    ) -> list[list[float]]:
        if any(start < 1 or start > len(seq) for seq, start in zip(batch, starts, strict=True)):
            raise BackendError("token log-probabilities need at least one token of context before the first scored one")
        model = self.model("causal")

        def run(ids: torch.Tensor, mask: torch.Tensor, rows: list[int]) -> list[list[float]]:
            # the logit at position p predicts token p + 1: row i needs positions starts[i] - 1 .. len - 2
            first = min(starts[i] for i in rows) - 1
            logits = self._causal_logits(model, ids, mask, ids.shape[1] - first)  # [B, T - first, V]
            picked = []
            for row, index in enumerate(rows):
                start, stop = starts[index], len(batch[index])
                row_logits = logits[row, start - 1 - first : stop - 1 - first].float()  # one row in float32
                targets = ids[row, start:stop].unsqueeze(-1)
                picked.append(torch.log_softmax(row_logits, dim=-1).gather(-1, targets).squeeze(-1))
            counts = [len(batch[i]) - starts[i] for i in rows]
            return split_rows(torch.cat(picked).cpu().tolist(), counts)

        return self._map(batch, batch_size, run)

    def _causal_logits(
        self, model: Any, ids: torch.Tensor, mask: torch.Tensor, keep: int | torch.Tensor
    ) -> torch.Tensor:
        """Logits at the last ``keep`` positions (int) or at the positions ``keep`` (1-D tensor)."""
        if "logits_to_keep" in _forward_parameters(model):
            return model(input_ids=ids, attention_mask=mask, logits_to_keep=keep, **_no_cache(model)).logits
        logits = model(input_ids=ids, attention_mask=mask, **_no_cache(model)).logits
        return logits[:, -keep:] if isinstance(keep, int) else logits[:, keep]

    def chat(self, requests: Sequence[ChatRequest]) -> list[ChatReply | Exception]:
        try:
            return chat_replies(self, requests)
        finally:
            self.release_cache()


def _forward_parameters(model: Any) -> frozenset[str]:
    return _parameters_of(type(model))


@functools.cache
def _parameters_of(cls: type) -> frozenset[str]:
    return frozenset(inspect.signature(cls.forward).parameters)


def _no_cache(model: Any) -> dict[str, bool]:
    """``use_cache=False`` where the forward names it: a scoring pass never reuses the KV cache."""
    return {"use_cache": False} if "use_cache" in _forward_parameters(model) else {}
