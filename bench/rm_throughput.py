"""Reward-model throughput: the service under many small requests vs a batched transformers forward.

Both sides score the same samples with the same model, on the same device, in the same dtype:

1. **batched transformers** (the baseline a careful user writes): chat template, the texts sorted
   by length, one padded forward pass per ``--batch-size`` texts under ``torch.inference_mode``,
   the head's logit per row;
2. **service**: ``rewardhub serve`` in a subprocess, hit by ``--concurrency`` clients that each send
   single-sample ``POST /v1/score`` requests of ``outcome_rm`` back to back; the micro-batcher
   turns them into batches of up to ``--batch-size`` (the same size as the baseline's).

The two sides alternate (baseline first on even rounds, service first on odd ones) for
``--repeats`` rounds after a warm-up of each; the report gives the median samples/s of each, the
ratio of the medians, and how far the scores agree: the largest difference, that difference as
a share of the scores' spread, and the share of sample pairs both sides put in the same order
(what group-relative advantages depend on). With ``--device cuda`` and vLLM installed it adds
``LLM.classify`` over everything in one batch, on the same GPU.

The model is a random Qwen2 sequence classifier with a character tokenizer, built into a temporary
directory (nothing is downloaded); ``--model PATH`` benches a local checkpoint instead.

The comparison (and vLLM's, when measured) goes to ``bench/results/rm_throughput.json``, the rows
of the benchmark table (``bench/run_all.py``), with ratio = service / baseline samples/s. With
``--json OUT`` every number goes to OUT instead and the table's rows are left alone (what
``scripts/gpu_check.py`` and its test use).

    python bench/rm_throughput.py [--device cpu|cuda] [--samples 256] [--concurrency 64] [--batch-size 64]
        [--hidden 256] [--layers 4] [--repeats 5] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import write_rows  # noqa: E402
from _serve import start_service  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_model(root: Path, hidden: int, layers: int) -> str:
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    vocab = {t: i for i, t in enumerate(["<pad>", "<unk>", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 3,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        num_key_value_heads=max(1, hidden // 128),
        max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=1,
        initializer_range=0.1,  # scores spread widely, so agreement is measured against a real spread
    )
    torch.manual_seed(0)
    path = root / "rm"
    Qwen2ForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def make_samples(n: int) -> list[dict[str, str]]:
    """Distinct prompt/response pairs of a few hundred characters (no two alike: no dedup help)."""
    return [
        {
            "id": str(i),
            "prompt": f"Question {i}: what is {i} + {i * 7 % 13}? Explain briefly.",
            "response": f"We add {i} and {i * 7 % 13}. "
            + "Carefully checking each digit. " * (2 + i % 5)
            + f"Answer: {i + i * 7 % 13}",
        }
        for i in range(n)
    ]


def resolve_dtype(requested: str, device: str) -> str:
    """The dtype both sides use: the service's own rule for ``auto``, so the baseline matches it."""
    import torch

    from rewardhub.models.backends.placement import resolve_dtype as service_rule

    cuda = device.startswith("cuda")
    return service_rule(requested, "cuda" if cuda else "cpu", cuda and torch.cuda.is_bf16_supported())


class BatchedTransformers:
    """The baseline: the model loaded once, each call scores every sample in padded batches."""

    def __init__(self, model_path: str, device: str, dtype: str, batch_size: int) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.torch = torch
        self.device = device
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.tokenizer.padding_side = "right"
        self.model = (
            AutoModelForSequenceClassification.from_pretrained(model_path, dtype=getattr(torch, dtype))
            .to(device)
            .eval()
        )

    def _text(self, s: dict[str, str]) -> str:
        messages = [{"role": "user", "content": s["prompt"]}, {"role": "assistant", "content": s["response"]}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False)

    def score(self, samples: list[dict[str, str]]) -> list[float]:
        torch = self.torch
        texts = [self._text(s) for s in samples]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)  # less padding per batch
        scores = [0.0] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = self.tokenizer(
                    [texts[i] for i in rows], padding=True, add_special_tokens=False, return_tensors="pt"
                ).to(self.device)
                logits = self.model(**batch, use_cache=False).logits[:, 0].float().cpu().tolist()
                for i, value in zip(rows, logits, strict=True):
                    scores[i] = value
        return scores


async def service_scores(
    url: str, spec: dict, samples: list[dict[str, str]], concurrency: int
) -> tuple[list[float], float]:
    """``concurrency`` clients, each sending single-sample requests back to back; the scores, and
    the mean size of the batches the service ran (the samples of one batch share its elapsed_ms)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one(s: dict[str, str]) -> dict[str, Any]:
            r = await client.post("/v1/score", json={"verifier": spec, "samples": [s]})
            r.raise_for_status()
            [result] = r.json()["results"]
            if result["status"] != "ok":
                raise RuntimeError(result["error"])
            return result

        queue = list(reversed(samples))
        results: dict[str, dict[str, Any]] = {}

        async def client_loop() -> None:
            while queue:
                s = queue.pop()
                results[s["id"]] = await one(s)

        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
    batches = len({r["elapsed_ms"] for r in results.values()})
    return [results[s["id"]]["score"] for s in samples], len(samples) / batches


def agreement(a: list[float], b: list[float]) -> dict[str, float]:
    """How far two score lists agree: largest difference, as a share of the spread, pair order."""
    worst = max(abs(x - y) for x, y in zip(a, b, strict=True))
    spread = (max(b) - min(b)) or 1.0
    same = total = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if b[i] != b[j]:
                total += 1
                same += (a[i] - a[j]) * (b[i] - b[j]) > 0
    return {"max_abs_diff": worst, "diff_of_spread": worst / spread, "pair_order_agreement": same / max(total, 1)}


def vllm_one_batch(model_path: str, samples: list[dict[str, str]]) -> float:
    """Seconds for ``LLM.classify`` over every sample in one call (activation off: raw logits)."""
    from transformers import AutoTokenizer
    from vllm import LLM, PoolingParams

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": s["prompt"]}, {"role": "assistant", "content": s["response"]}], tokenize=False
        )
        for s in samples
    ]
    llm = LLM(model=model_path, runner="pooling", gpu_memory_utilization=0.3)
    llm.classify(texts[:8], pooling_params=PoolingParams(use_activation=False), use_tqdm=False)
    start = time.perf_counter()
    llm.classify(texts, pooling_params=PoolingParams(use_activation=False), use_tqdm=False)
    elapsed = time.perf_counter() - start
    del llm
    return elapsed


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def run(args: argparse.Namespace, model_path: str) -> dict[str, Any]:
    samples = make_samples(args.samples)
    dtype = resolve_dtype(args.dtype, args.device)
    baseline = BatchedTransformers(model_path, args.device, dtype, args.batch_size)
    env = {"REWARDHUB_MODEL_BATCH_SIZE": str(args.batch_size), "REWARDHUB_MODEL_BATCH_WAIT_MS": str(args.batch_wait_ms)}
    config = {"model": model_path, "device": args.device, "dtype": dtype, "batch_size": args.batch_size}
    spec = {"name": "outcome_rm", "config": config}
    times: dict[str, list[float]] = {"baseline": [], "service": []}
    proc, url = start_service("--workers", "1", env=env, timeout_s=120)
    try:
        # warm-up: loads the service's copy of the model, and runs both sides once
        asyncio.run(service_scores(url, spec, samples[: args.batch_size], args.concurrency))
        baseline.score(samples[: args.batch_size])
        sides = {
            "baseline": lambda: baseline.score(samples),
            "service": lambda: asyncio.run(service_scores(url, spec, samples, args.concurrency)),
        }
        scores: dict[str, list[float]] = {}
        batch_sizes: list[float] = []
        for round_ in range(args.repeats):
            for side in ("baseline", "service") if round_ % 2 == 0 else ("service", "baseline"):
                seconds, scores[side] = timed(sides[side])
                times[side].append(seconds)
                if side == "service":
                    scores[side], mean_batch = scores[side]
                    batch_sizes.append(mean_batch)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    result: dict[str, Any] = {
        "device": args.device,
        "dtype": dtype,
        "samples": len(samples),
        "concurrency": args.concurrency,
        "batch_size": args.batch_size,
        "batch_wait_ms": args.batch_wait_ms,
        "repeats": args.repeats,
        "baseline_sps": len(samples) / statistics.median(times["baseline"]),
        "service_sps": len(samples) / statistics.median(times["service"]),
        "baseline_runs_s": times["baseline"],
        "service_runs_s": times["service"],
        "service_mean_batch": statistics.median(batch_sizes),
        **agreement(scores["service"], scores["baseline"]),
    }
    result["ratio"] = result["service_sps"] / result["baseline_sps"]
    if args.device.startswith("cuda") and importlib.util.find_spec("vllm") is not None:
        result["vllm_one_batch_sps"] = len(samples) / vllm_one_batch(model_path, samples)
    return result


def report(result: dict[str, Any]) -> str:
    n = result["samples"]
    lines = [
        f"{n} samples, {result['device']} {result['dtype']}, batch size {result['batch_size']}, "
        f"{result['concurrency']} concurrent clients, median of {result['repeats']} alternating rounds",
        f"batched transformers forward : {result['baseline_sps']:9.1f} samples/s",
        f"service, 1-sample requests   : {result['service_sps']:9.1f} samples/s "
        f"(batches of {result['service_mean_batch']:.1f} on average)",
        f"ratio service / batched      : {result['ratio']:9.2f}x",
        f"score agreement              : max |diff| {result['max_abs_diff']:.2e} "
        f"({result['diff_of_spread']:.2%} of the spread), same order for {result['pair_order_agreement']:.2%} of pairs",
    ]
    if "vllm_one_batch_sps" in result:
        lines.append(f"vLLM classify, one batch     : {result['vllm_one_batch_sps']:9.1f} samples/s")
    elif result["device"].startswith("cuda"):
        lines.append("vLLM classify                : not installed here, not measured")
    return "\n".join(lines)


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows: the service against the batched forward (and vLLM's one batch, if measured)."""
    case = (
        f"{result['model']}, {result['device']} {result['dtype']}: {result['samples']} samples, "
        f"{result['concurrency']} concurrent one-sample /v1/score"
    )
    agree = (
        f"scores agree to {result['max_abs_diff']:.1e} ({result['diff_of_spread']:.1e} of the spread), "
        f"same order for {result['pair_order_agreement']:.2%} of pairs"
    )
    out = [
        {
            "case": case,
            "baseline": f"batched transformers forward, batches of {result['batch_size']}",
            "baseline_value": round(result["baseline_sps"], 1),
            "ours_value": round(result["service_sps"], 1),
            "unit": "samples/s",
            "ratio": round(result["ratio"], 2),
            "note": f"{agree}; service batches of {result['service_mean_batch']:.1f} on average",
        }
    ]
    if "vllm_one_batch_sps" in result:
        out.append(
            {
                "case": case,
                "baseline": "vLLM LLM.classify, every sample in one call",
                "baseline_value": round(result["vllm_one_batch_sps"], 1),
                "ours_value": round(result["service_sps"], 1),
                "unit": "samples/s",
                "ratio": round(result["service_sps"] / result["vllm_one_batch_sps"], 2),
                "note": "vLLM's scores not compared",
            }
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (both sides)")
    parser.add_argument("--dtype", default="auto", help="auto (bf16 on a GPU, fp32 on CPU), float32, bfloat16, float16")
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64, help="the baseline's batch and the service's largest")
    parser.add_argument("--batch-wait-ms", type=float, default=5.0, help="the service's model_batch_wait_ms")
    parser.add_argument("--repeats", type=int, default=5, help="alternating rounds of each side")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--model", help="a local sequence-classification checkpoint instead of the random one")
    parser.add_argument(
        "--json", dest="json_out", help="write the numbers to this file instead of the table's rows in bench/results"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        model_path = args.model or build_model(Path(tmp), args.hidden, args.layers)
        described = args.model or f"random Qwen2 RM, hidden {args.hidden}, {args.layers} layers"
        print(f"model: {described}; CPUs: {os.cpu_count()}", flush=True)
        result = run(args, model_path)
    result["model"] = described
    print(report(result))
    print(json.dumps(result))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2))
    else:
        write_rows("rm_throughput", rows(result))
    return result


if __name__ == "__main__":
    main()
