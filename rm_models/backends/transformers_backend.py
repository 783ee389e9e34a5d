"""Hugging Face transformers backend: any model on CPU or one GPU, loaded lazily, once.

One backend object per model (see ``get_backend``) holds the tokenizer and up to three heads of
that checkpoint, each loaded on first use: a sequence classifier (outcome RMs), a token
classifier (Qwen2.5-Math-PRM style PRMs) and a causal LM (Math-Shepherd PRMs, implicit PRMs,
small judges). Batches are sorted by length and right-padded, so a sample's position indices are
the same alone or in a batch; what it does not do is share the GPU with vLLM or split a model
over several devices.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from rewardhub.models.backends.base import Backend, ChatReply, ChatRequest, TokenAlternatives
from rewardhub.models.config import BackendSpec
from rewardhub.models.errors import BackendError

__all__ = ["TransformersBackend"]

Head = Literal["sequence", "token", "causal"]


class TransformersBackend(Backend):
    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        import torch  # the [models] extra: imported only when a model backend is built

        self._torch = torch
        self.device = torch.device(_pick_device(spec.device, torch.cuda.is_available()))
        self.dtype = _pick_dtype(spec.dtype, self.device.type, torch)
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._models: dict[Head, Any] = {}

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
        return model.to(self.device).eval()

    # ---- batching ------------------------------------------------------------------------

    def _padded_chunks(self, batch: Sequence[Sequence[int]], batch_size: int) -> Iterator[tuple[list[int], Any, Any]]:
        """(original indices, input_ids, attention_mask) per chunk, longest first, right-padded."""
        torch = self._torch
        pad_id = self.tokenizer.pad_token_id
        pad_id = 0 if pad_id is None else pad_id
        order = sorted(range(len(batch)), key=lambda i: len(batch[i]), reverse=True)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = len(batch[chunk[0]])
            ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, index in enumerate(chunk):
                seq = batch[index]
                ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
                mask[row, : len(seq)] = 1
            yield chunk, ids.to(self.device), mask.to(self.device)

    def _map(
        self, batch: Sequence[Sequence[int]], batch_size: int, run: Callable[[Any, Any, list[int]], list[Any]]
    ) -> list[Any]:
        """Run ``run(ids, mask, lengths)`` per padded chunk and put the answers back in input order."""
        if any(len(seq) == 0 for seq in batch):
            raise BackendError("cannot run a model on an empty token sequence")
        out: list[Any] = [None] * len(batch)
        with self._torch.inference_mode():
            for chunk, ids, mask in self._padded_chunks(batch, batch_size):
                lengths = [len(batch[i]) for i in chunk]
                for index, value in zip(chunk, run(ids, mask, lengths), strict=True):
                    out[index] = value
        return out

    # ---- operations ----------------------------------------------------------------------

    def classify(self, batch: Sequence[Sequence[int]], batch_size: int) -> list[list[float]]:
        model = self.model("sequence")

        def run(ids: Any, mask: Any, lengths: list[int]) -> list[list[float]]:
            return self._sequence_logits(model, ids, mask, lengths).float().cpu().tolist()

        return self._map(batch, batch_size, run)

    def _sequence_logits(self, model: Any, ids: Any, mask: Any, lengths: list[int]) -> Any:
        """[B, labels] logits read at each sequence's last real token.

        Decoder classifiers find "the last token" by looking for the pad id, which goes wrong when
        the pad id is also the end-of-turn token a chat template puts last. Reading the head at
        the known length is exact, so that is done whenever the model has the usual
        ``base_model`` + ``score`` layout; other classifiers use their own pooling.
        """
        torch = self._torch
        score = getattr(model, "score", None)
        base = getattr(model, "base_model", None)
        if isinstance(score, torch.nn.Module) and base is not None and base is not model:
            hidden = base(input_ids=ids, attention_mask=mask).last_hidden_state
            last = torch.tensor([n - 1 for n in lengths], device=hidden.device)
            return score(hidden[torch.arange(len(lengths), device=hidden.device), last])
        return model(input_ids=ids, attention_mask=mask).logits

    def step_label_probs(self, batch: Sequence[Sequence[int]], tag_id: int, batch_size: int) -> list[list[list[float]]]:
        model = self.model("token")

        def run(ids: Any, mask: Any, lengths: list[int]) -> list[list[list[float]]]:
            out = model(input_ids=ids, attention_mask=mask)
            logits = out.logits if hasattr(out, "logits") else out[0]  # [B, T, labels]
            probs = logits.float().softmax(dim=-1)
            return [probs[row][ids[row] == tag_id].cpu().tolist() for row in range(len(lengths))]

        return self._map(batch, batch_size, run)

    def step_token_probs(
        self, batch: Sequence[Sequence[int]], tag_id: int, candidate_ids: Sequence[int], batch_size: int
    ) -> list[list[list[float]]]:
        model = self.model("causal")
        candidates = self._torch.tensor(list(candidate_ids), device=self.device)

        def run(ids: Any, mask: Any, lengths: list[int]) -> list[list[list[float]]]:
            logits = model(input_ids=ids, attention_mask=mask).logits  # [B, T, V]
            picked = logits.index_select(-1, candidates).float().softmax(dim=-1)  # [B, T, C]
            return [picked[row][ids[row] == tag_id].cpu().tolist() for row in range(len(lengths))]

        return self._map(batch, batch_size, run)

    def token_logprobs(
        self, batch: Sequence[Sequence[int]], starts: Sequence[int], batch_size: int
    ) -> list[list[float]]:
        if any(start < 1 or start > len(seq) for seq, start in zip(batch, starts, strict=True)):
            raise BackendError("token log-probabilities need at least one token of context before the first scored one")
        model = self.model("causal")
        torch = self._torch

        def run(ids: Any, mask: Any, lengths: list[int]) -> list[list[float]]:
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()  # predicts tokens 1..T-1
            logprobs = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            return [logprobs[row, : n - 1].cpu().tolist() for row, n in enumerate(lengths)]

        full = self._map(batch, batch_size, run)
        # full[i][t - 1] is log π(x_t | x_<t); keep t >= start.
        return [lp[start - 1 :] for lp, start in zip(full, starts, strict=True)]

    def chat(self, requests: Sequence[ChatRequest]) -> list[ChatReply | Exception]:
        replies: list[ChatReply | Exception] = []
        for request in requests:
            try:
                replies.append(self._chat_one(request))
            except BackendError as exc:
                replies.append(exc)
        return replies

    def _chat_one(self, request: ChatRequest) -> ChatReply:
        prompt = self.render_chat(request.message_dicts(), add_generation_prompt=True)
        prompt_ids = self.tokenizer(prompt, add_special_tokens=False).input_ids
        if request.choices:
            return self._choose(prompt_ids, request.choices)
        return self._generate(prompt_ids, request)

    def _choose(self, prompt_ids: list[int], choices: Sequence[str]) -> ChatReply:
        """Constrained decoding over a fixed set: the choice with the highest log-likelihood."""
        tokenizer = self.tokenizer
        seqs = [prompt_ids + tokenizer(choice, add_special_tokens=False).input_ids for choice in choices]
        logprobs = self.token_logprobs(seqs, [len(prompt_ids)] * len(seqs), batch_size=len(seqs))
        best = max(range(len(choices)), key=lambda i: sum(logprobs[i]))
        return ChatReply(text=choices[best], finish_reason="stop")

    def _generate(self, prompt_ids: list[int], request: ChatRequest) -> ChatReply:
        torch = self._torch
        model = self.model("causal")
        tokenizer = self.tokenizer
        ids = torch.tensor([prompt_ids], device=self.device)
        sampling = request.temperature > 0
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=request.max_tokens,
                do_sample=sampling,
                temperature=request.temperature if sampling else None,
                top_p=None,
                top_k=None,
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
                eos_token_id=tokenizer.eos_token_id,
                output_logits=request.top_logprobs is not None,
                return_dict_in_generate=True,
            )
        new = out.sequences[0, len(prompt_ids) :].tolist()
        logprobs = None
        if request.top_logprobs is not None:
            logprobs = tuple(self._alternatives(step[0], request.top_logprobs) for step in out.logits)
        eos = tokenizer.eos_token_id
        finish = "stop" if eos is not None and new and new[-1] == eos else "length"
        return ChatReply(text=tokenizer.decode(new, skip_special_tokens=True), logprobs=logprobs, finish_reason=finish)

    def _alternatives(self, logits: Any, k: int) -> TokenAlternatives:
        top = self._torch.log_softmax(logits.float(), dim=-1).topk(k)
        tokens = self.tokenizer.convert_ids_to_tokens(top.indices.tolist())
        return tuple(
            (self.tokenizer.convert_tokens_to_string([t]), lp)
            for t, lp in zip(tokens, top.values.tolist(), strict=True)
        )


def _pick_device(device: str, cuda_available: bool) -> str:
    if device == "auto":
        return "cuda" if cuda_available else "cpu"
    return device


def _pick_dtype(dtype: str, device_type: str, torch: Any) -> Any:
    if dtype == "auto":
        return torch.bfloat16 if device_type == "cuda" else torch.float32
    return getattr(torch, dtype)
