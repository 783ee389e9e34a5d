"""What the model verifiers share: score via score_batch, per-sample preparation, chat turns.

A model verifier prepares each sample (text, token ids) on its own, so one sample that cannot be
prepared (too long, no steps) becomes that sample's error while the rest still go to the device
in one batch.

A model verdict names what gave it: ``details.model`` holds the configured name, the backend's
identity (backend, loaded model, weights hash, dtype) and the decoding (:func:`with_model`), and
the verdict key folds the weights hash into its config hash (:meth:`ModelVerifier.verdict_key`),
so the reward cache never serves a verdict of other weights under the same name or path.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from rewardhub.errors import VerifierError
from rewardhub.registry import ENTRY_POINT_GROUP
from rewardhub.types import Result, Sample, ToolCall, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig

from .backends.base import Backend
from .backends.placement import DevicePlacementError, resolve_device, resolve_dtype
from .config import JudgeConfig, ModelConfig
from .errors import InputTooLong
from .kit import ModelNotInstalled, resolve_model, weights_hash

__all__ = [
    "ModelVerifier",
    "chat_turns",
    "check_length",
    "decoding",
    "installed_verifier",
    "model_precision",
    "model_weights",
    "with_weights",
    "score_prepared",
    "with_model",
]

P = TypeVar("P")


class ModelVerifier(Verifier):
    """A verifier whose real work is ``score_batch``; ``score`` is a batch of one."""

    kind: ClassVar[VerifierKind] = "model"

    def score(self, sample: Sample, config: Any) -> Result | float:
        return self.score_batch([sample], config)[0]

    @classmethod
    def verdict_key(cls, config: VerifierConfig) -> dict[str, str]:
        """The base key with the weights of every model the config names (``model``, and
        ``ref_model`` where there is one) folded into ``config_hash`` and shown as ``weights``:
        the same name or path over other weights is another verdict."""
        return with_weights(super().verdict_key(config), config)


def with_weights(key: dict[str, str], config: VerifierConfig) -> dict[str, str]:
    """A verdict key with the weights of the config's models and the precision they run in folded
    in (see ModelVerifier.verdict_key). The config already names backend, dtype and decoding; but
    ``dtype: auto`` is float32 on a CPU and bfloat16 on a GPU, whose verdicts can differ, so the
    key carries the precision this host resolves ``auto`` to, and a shared cache never serves a
    CPU judge's verdict as a GPU judge's."""
    if not isinstance(config, ModelConfig):
        return key
    names = [getattr(config, field, None) for field in ("model", "ref_model")]
    weights = ",".join(model_weights(config, name) for name in names if isinstance(name, str))
    precision = model_precision(config)
    folded = hashlib.sha256(f"{key['config_hash']}|{weights}|{precision}".encode()).hexdigest()[:16]
    return {**key, "config_hash": folded, "weights": weights, "precision": precision}


def model_precision(config: ModelConfig) -> str:
    """The dtype a config's model computes in on this host: the configured one unless ``auto``;
    ``auto`` resolved as the transformers backend resolves it (bfloat16 or float16 on a GPU,
    float32 on a CPU), for vLLM the checkpoint's dtype on this host's platform (vLLM resolves
    ``auto`` from both), ``served`` behind an HTTP endpoint (the server decides)."""
    if config.backend == "openai":
        return "served"
    if config.dtype != "auto":
        return config.dtype
    return _auto_precision(config.backend, config.device, _checkpoint_dtype(config.model))


def _checkpoint_dtype(model: str) -> str:
    try:
        folder = Path(resolve_model(model))
        saved = json.loads((folder / "config.json").read_text())
    except (ModelNotInstalled, OSError, ValueError):
        return "unknown"
    return str(saved.get("torch_dtype") or saved.get("dtype") or "unknown")


@functools.lru_cache(maxsize=64)
def _auto_precision(backend: str, device: str, checkpoint_dtype: str) -> str:
    try:
        import torch
    except ImportError:  # no torch here: the key says so rather than guess
        return "auto"
    cuda = torch.cuda.device_count()
    if backend == "vllm":
        return f"auto({checkpoint_dtype},{'cuda' if cuda else 'cpu'})"
    try:
        device_type = resolve_device(device, cuda).partition(":")[0]
    except DevicePlacementError:
        return "auto"  # the backend refuses this device; its samples are errors, whatever the key
    bf16 = device_type == "cuda" and torch.cuda.is_bf16_supported()
    return resolve_dtype("auto", device_type, bf16)


def score_prepared(
    samples: Sequence[Sample],
    failure_score: float,
    prepare: Callable[[Sample], P | Result],
    run: Callable[[list[P]], list[Result]],
) -> list[Result]:
    """``prepare`` each sample (a :class:`Result` from it is final, a VerifierError is that
    sample's error), then ``run`` the prepared ones together and put everything back in order."""
    results: list[Result | None] = [None] * len(samples)
    ready: list[tuple[int, P]] = []
    for index, sample in enumerate(samples):
        try:
            prepared = prepare(sample)
        except VerifierError as exc:
            results[index] = Result.failed(exc.message, score=failure_score)
            continue
        if isinstance(prepared, Result):
            results[index] = prepared
        else:
            ready.append((index, prepared))
    if ready:
        for (index, _), result in zip(ready, run([p for _, p in ready]), strict=True):
            results[index] = result
    return [r for r in results if r is not None]


def chat_turns(sample: Sample, response: str | None = None, system: str | None = None) -> list[dict[str, Any]]:
    """The conversation of a sample: optional system message, the prompt's turns, then the response.

    A sample with ``messages`` is its whole conversation, tool calls (arguments as objects, as chat
    templates expect them) and tool results included, so a reward model scores the trajectory and
    not only its final text; ``response`` replaces the last assistant turn's text.
    """
    turns: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    if sample.messages is None:
        if isinstance(sample.prompt, str):
            turns.append({"role": "user", "content": sample.prompt})
        elif sample.prompt is not None:
            turns.extend({"role": m.role, "content": m.content} for m in sample.prompt)
        turns.append({"role": "assistant", "content": sample.response if response is None else response})
        return turns
    conversation = sample.conversation()
    last = max(i for i, m in enumerate(conversation) if m.role == "assistant")
    for index, message in enumerate(conversation):
        turn: dict[str, Any] = {"role": message.role, "content": message.content}
        if index == last:
            turn["content"] = sample.response if response is None else response
        if message.tool_calls:
            turn["tool_calls"] = [_template_call(call) for call in message.tool_calls]
        if message.tool_call_id is not None:
            turn["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            turn["name"] = message.name
        turns.append(turn)
    return turns


def _template_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.function.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass  # malformed arguments are shown as written
    return {"type": "function", "function": {"name": call.function.name, "arguments": arguments}}


def model_weights(config: ModelConfig, model: str) -> str:
    """The weights identity of one model a config names: its hash where the weights are local,
    ``served`` behind an HTTP endpoint, ``not-installed`` for a kit model not installed (its
    samples are errors), ``remote`` for a hub id (not readable offline)."""
    if config.backend == "openai":
        return "served"
    try:
        folder = resolve_model(model)
    except ModelNotInstalled:
        return "not-installed"
    return weights_hash(folder) or "remote"


def decoding(config: ModelConfig) -> dict[str, Any] | str:
    """How the model's output was read: a judge's decoding, or ``teacher-forced`` for scorers."""
    if not isinstance(config, JudgeConfig):
        return "teacher-forced"
    # logprobs and choices read the judge's distribution itself (see judging._request): greedy, whatever
    # the configured temperature, which only samples last_line replies
    temperature = config.temperature if config.verdict == "last_line" else 0.0
    out: dict[str, Any] = {"verdict": config.verdict, "temperature": temperature}
    if config.verdict == "logprobs":
        out.update(max_tokens=1, top_logprobs=config.top_logprobs)
    else:
        out["max_tokens"] = 8 if config.verdict == "choices" else config.max_tokens
    if not config.chat_template:
        out["prompt"] = "plain"  # no chat template: a completion ending in judge_prompts.PLAIN_CUE
    return out


def with_model(results: Sequence[Result], backend: Backend, config: ModelConfig, **more: Any) -> list[Result]:
    """``results`` with ``details.model``: the configured name, the backend's identity and the
    decoding (``more``: other models, such as a reference LM's identity)."""
    identity = {"name": config.model, **backend.describe(), "decoding": decoding(config), **more}
    return [r.model_copy(update={"details": {**r.details, "model": identity}}) for r in results]


def check_length(ids: Sequence[int], max_length: int) -> None:
    if len(ids) > max_length:
        raise InputTooLong(f"sample is {len(ids)} tokens, over max_length={max_length}")


def installed_verifier(name: str) -> Verifier:
    """An installed verifier by entry-point name, loaded alone: one broken plugin elsewhere
    does not stop a judge from consulting its rule or an evaluator from running."""
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Verifier)):
            raise VerifierError(f"entry point {name!r} is not a rewardhub Verifier")
        return cls()
    raise VerifierError(f"no verifier named {name!r} is installed")
