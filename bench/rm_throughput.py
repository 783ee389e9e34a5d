"""Reward-model throughput: what a user writes first vs the service under many small requests.

Side by side, on one machine, with the same model:

1. **plain loop**: transformers, one sample at a time (template, tokenize, forward), the way a
   first reward function is written;
2. **service**: ``rewardhub serve`` in a subprocess, hit by 64 concurrent single-sample
   ``POST /v1/score`` requests of ``outcome_rm``; the micro-batcher turns them into batches.

Prints samples/s of each and the ratio (goal: at least 4x). With ``--gpu`` and vLLM installed it
adds a plain ``LLM.classify`` call with everything in one batch against the service on the vllm
backend (goal: within 10% of it).

The model is a small random Qwen2 sequence classifier with a character tokenizer, built into a
temporary directory (nothing is downloaded); ``--model PATH`` benches a local checkpoint instead.

    python bench/rm_throughput.py [--samples 128] [--concurrency 64] [--hidden 256] [--layers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import string
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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


def plain_loop(model_path: str, samples: list[dict[str, str]]) -> tuple[float, list[float]]:
    """The baseline: one sample at a time through transformers."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForSequenceClassification.from_pretrained(model_path).eval()

    def one(s: dict[str, str]) -> float:
        messages = [{"role": "user", "content": s["prompt"]}, {"role": "assistant", "content": s["response"]}]
        ids = tokenizer(
            tokenizer.apply_chat_template(messages, tokenize=False), add_special_tokens=False, return_tensors="pt"
        )
        with torch.no_grad():
            return model(**ids).logits[0, 0].item()

    one(samples[0])  # warm-up
    start = time.perf_counter()
    scores = [one(s) for s in samples]
    return time.perf_counter() - start, scores


async def service_run(
    url: str, spec: dict, samples: list[dict[str, str]], concurrency: int
) -> tuple[float, list[float]]:
    """``concurrency`` clients, each sending single-sample requests back to back."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one(s: dict[str, str]) -> float:
            r = await client.post("/v1/score", json={"verifier": spec, "samples": [s]})
            r.raise_for_status()
            [result] = r.json()["results"]
            if result["status"] != "ok":
                raise RuntimeError(result["error"])
            return result["score"]

        await asyncio.gather(*(one(s) for s in samples[:concurrency]))  # warm-up: loads the model
        queue = list(samples)
        scores: dict[str, float] = {}

        async def client_loop() -> None:
            while queue:
                s = queue.pop()
                scores[s["id"]] = await one(s)

        start = time.perf_counter()
        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return elapsed, [scores[s["id"]] for s in samples]


def vllm_one_batch(model_path: str, samples: list[dict[str, str]]) -> float:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--model", help="a local sequence-classification checkpoint instead of the random one")
    parser.add_argument("--batch-size", type=int, default=64, help="server's model_batch_size")
    parser.add_argument("--gpu", action="store_true", help="also compare with vLLM (needs a GPU and vllm)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model_path = args.model or build_model(Path(tmp), args.hidden, args.layers)
        samples = make_samples(args.samples)
        print(f"model: {model_path if args.model else f'random Qwen2 RM, hidden {args.hidden}, {args.layers} layers'}")
        print(f"samples: {len(samples)}, concurrency: {args.concurrency}, CPUs: {os.cpu_count()}")

        loop_s, loop_scores = plain_loop(model_path, samples)
        print(f"plain transformers loop : {len(samples) / loop_s:8.1f} samples/s ({loop_s:.2f} s)")

        env = {"REWARDHUB_MODEL_BATCH_SIZE": str(args.batch_size), "REWARDHUB_MODEL_BATCH_WAIT_MS": "5"}
        proc, url = start_service("--workers", "1", env=env)
        try:
            spec = {
                "name": "outcome_rm",
                "config": {"model": model_path, "device": "cpu", "batch_size": args.batch_size},
            }
            svc_s, svc_scores = asyncio.run(service_run(url, spec, samples, args.concurrency))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        print(f"service, {args.concurrency} concurrent  : {len(samples) / svc_s:8.1f} samples/s ({svc_s:.2f} s)")
        print(f"ratio service / loop    : {loop_s / svc_s:8.2f}x   (goal >= 4x)")
        worst = max(abs(a - b) for a, b in zip(loop_scores, svc_scores, strict=True))
        print(f"largest score difference: {worst:.2e} (batched vs one at a time)")

        if args.gpu:
            one_batch_s = vllm_one_batch(model_path, samples)
            proc, url = start_service("--workers", "1", env=env)
            try:
                spec = {
                    "name": "outcome_rm",
                    "config": {"model": model_path, "backend": "vllm", "gpu_memory_utilization": 0.3},
                }
                gpu_s, _ = asyncio.run(service_run(url, spec, samples, args.concurrency))
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            print(f"vLLM classify, one batch: {len(samples) / one_batch_s:8.1f} samples/s")
            print(
                f"service on vllm backend : {len(samples) / gpu_s:8.1f} samples/s ({one_batch_s / gpu_s:.0%} of one batch; goal >= 90%)"
            )
        print(
            json.dumps(
                {"loop_sps": len(samples) / loop_s, "service_sps": len(samples) / svc_s, "ratio": loop_s / svc_s}
            )
        )


if __name__ == "__main__":
    main()
