"""Judge throughput on a real model: the service on vLLM, the service on transformers, plain vLLM.

The same judge workload (``--samples`` arithmetic answers, right and wrong, judged by the kit's
SmolLM2-135M-Instruct in ``verify`` mode: free text, greedy, at most ``--max-tokens`` tokens, the
verdict on its last line) goes through three sides on the same cores:

1. **service on vLLM**: ``rewardhub serve`` with the ``judge`` verifier on ``backend: vllm``
   (bfloat16), the whole batch in one ``POST /v1/score``, as a trainer sends a step's samples;
2. **service on transformers**: the same with ``backend: transformers`` (float32, its CPU dtype);
3. **plain vLLM** as a user calls it: ``LLM(model, dtype="bfloat16", enforce_eager=True)`` (2 GiB
   of KV cache) and one ``LLM.chat`` over the very prompts the judge sends (built by the judge's
   own prompt code), with ``SamplingParams(max_tokens, temperature=0)``.

Sides alternate (the order turns each round) for ``--rounds`` rounds after a warm-up of each. The
report gives, per side: samples/s and generated tokens/s (median round; tokens counted by the
model's tokenizer on each reply), engine start (the service's first request, which builds the
engine; ``LLM(...)`` for plain vLLM), memory held (RSS of the process tree after the rounds), and
verdict agreement with plain vLLM. Goal: the service on vLLM at >= 0.8 of plain vLLM's samples/s.

Results go to ``bench/results/model_judge_speed.json`` (rows of the benchmark table) and the
report to ``bench/results/model_judge_speed.log``.

    python bench/model_judge_speed.py [--samples 32] [--max-tokens 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import RESULTS, write_rows  # noqa: E402
from _serve import start_service  # noqa: E402

MODEL = "smollm2-135m-instruct"
KV_CACHE_GIB = 2


def make_samples(n: int) -> list[dict[str, str]]:
    """Sums with the right answer on even rows and an off-by-one on odd rows."""
    samples = []
    for i in range(n):
        a, b = 3 + 7 * i % 41, 5 + 11 * i % 37
        answer = a + b + (i % 2)
        samples.append({"prompt": f"What is {a} + {b}?", "response": f"\\boxed{{{answer}}}", "reference": str(a + b)})
    return samples


def judge_config(backend: str, max_tokens: int, samples: int) -> dict[str, Any]:
    dtype = "bfloat16" if backend == "vllm" else "float32"
    return {
        "model": MODEL,
        "backend": backend,
        "dtype": dtype,
        "device": "cpu",
        "verdict": "last_line",
        "max_tokens": max_tokens,
        "batch_size": samples,
        "api_key_env": None,
    }


class Service:
    """One ``rewardhub serve`` scoring with the judge on one backend."""

    def __init__(self, backend: str, args: argparse.Namespace) -> None:
        # the vllm backend's own CPU defaults: a 2 GiB KV cache, the engine in the service's process
        env = {"HF_HUB_OFFLINE": "1", "REWARDHUB_MODEL_BATCH_SIZE": str(args.samples)}
        self.process, url = start_service("--workers", "1", env=env, timeout_s=600)
        self.client = httpx.Client(base_url=url, timeout=1800)
        self.spec = {"name": "judge", "config": judge_config(backend, args.max_tokens, args.samples)}

    def judge(self, samples: list[dict[str, str]]) -> list[tuple[float, str]]:
        response = self.client.post("/v1/score", json={"verifier": self.spec, "samples": samples})
        response.raise_for_status()
        out = []
        for result in response.json()["results"]:
            if result["status"] not in ("ok", "error"):
                raise RuntimeError(result)
            out.append(
                (result["score"] if result["status"] == "ok" else -1.0, result["details"].get("judge_output", ""))
            )
        return out

    def rss(self) -> int:
        return tree_rss(self.process.pid)

    def close(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=60)


class PlainVLLM:
    """vLLM as a user calls it: one ``LLM.chat`` over every judge prompt."""

    def __init__(self, folder: str, args: argparse.Namespace) -> None:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(KV_CACHE_GIB))
        from vllm import LLM, SamplingParams

        self.llm = LLM(model=folder, dtype="bfloat16", enforce_eager=True)
        self.params = SamplingParams(max_tokens=args.max_tokens, temperature=0.0)
        self.max_tokens = args.max_tokens

    def judge(self, samples: list[dict[str, str]]) -> list[tuple[float, str]]:
        from rewardhub.models.judging import VERDICT_WORDS
        from rewardhub.models.verdicts import last_line_verdict

        outputs = self.llm.chat(judge_messages(samples, self.max_tokens), self.params, use_tqdm=False)
        out = []
        for o in outputs:
            text = o.outputs[0].text
            try:
                score = 1.0 if last_line_verdict(text, *VERDICT_WORDS) else 0.0
            except Exception:  # an unreadable verdict: the service's error status
                score = -1.0
            out.append((score, text))
        return out

    def rss(self, services: list[int]) -> int:
        """This process and its engine process, not the services this benchmark started."""
        return tree_rss(os.getpid(), leave_out=services)


def judge_messages(samples: list[dict[str, str]], max_tokens: int) -> list[list[dict[str, str]]]:
    """The judge's own chat messages for each sample (its template, hardening and final answer)."""
    from rewardhub.models.judge import Judge
    from rewardhub.types import Sample

    judge, config = Judge(), Judge.Config(**judge_config("vllm", max_tokens, len(samples)))
    return [judge._prepare_verify(Sample(**s), config).message_dicts() for s in samples]


def tree_rss(pid: int, leave_out: Sequence[int] = ()) -> int:
    """RSS of ``pid`` and its descendants, without the subtrees rooted at ``leave_out``."""
    process = psutil.Process(pid)
    skip = set(leave_out)
    for root in leave_out:
        skip.update(c.pid for c in psutil.Process(root).children(recursive=True))
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        if child.pid in skip:
            continue
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run(args: argparse.Namespace) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from rewardhub.models.kit import install

    folder = str(install(MODEL)[0])
    tokenizer = AutoTokenizer.from_pretrained(folder)
    samples = make_samples(args.samples)
    sides: dict[str, Any] = {}
    start_s: dict[str, float] = {}
    try:
        for name, build in (
            ("service on vLLM", lambda: Service("vllm", args)),
            ("service on transformers", lambda: Service("transformers", args)),
            ("plain vLLM", lambda: PlainVLLM(folder, args)),
        ):
            began = time.perf_counter()
            sides[name] = build()
            sides[name].judge(samples[:2])  # the service builds its engine on its first request
            start_s[name] = time.perf_counter() - began
            print(f"{name}: started in {start_s[name]:.1f} s", flush=True)
        times: dict[str, list[float]] = {name: [] for name in sides}
        replies: dict[str, list[tuple[float, str]]] = {}
        order = list(sides)
        for round_ in range(args.rounds):
            for name in order[round_ % 3 :] + order[: round_ % 3]:
                began = time.perf_counter()
                replies[name] = sides[name].judge(samples)
                times[name].append(time.perf_counter() - began)
                print(f"round {round_}: {name} {times[name][-1]:.2f} s", flush=True)
        services = [side.process.pid for side in sides.values() if isinstance(side, Service)]
        rss = {name: side.rss() if isinstance(side, Service) else side.rss(services) for name, side in sides.items()}
    finally:
        for side in sides.values():
            if isinstance(side, Service):
                side.close()
    plain = [score for score, _ in replies["plain vLLM"]]
    result: dict[str, Any] = {
        "samples": len(samples),
        "max_tokens": args.max_tokens,
        "rounds": args.rounds,
        "sides": {},
    }
    for name in sides:
        seconds = statistics.median(times[name])
        tokens = sum(len(tokenizer(text, add_special_tokens=False).input_ids) for _, text in replies[name])
        scores = [score for score, _ in replies[name]]
        result["sides"][name] = {
            "samples_per_s": len(samples) / seconds,
            "tokens_per_s": tokens / seconds,
            "runs_s": times[name],
            "start_s": start_s[name],
            "rss_mib": rss[name] / 2**20,
            "agree_with_plain_vllm": sum(a == b for a, b in zip(scores, plain, strict=True)) / len(samples),
            "unreadable": scores.count(-1.0),
        }
    result["ratio"] = (
        result["sides"]["service on vLLM"]["samples_per_s"] / result["sides"]["plain vLLM"]["samples_per_s"]
    )
    return result


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['samples']} judge samples (verify, last_line, greedy, <= {result['max_tokens']} tokens), "
        f"SmolLM2-135M-Instruct on CPU, median of {result['rounds']} alternating rounds",
        f"{'side':<25}{'samples/s':>10}{'tokens/s':>10}{'start s':>9}{'RSS MiB':>9}{'agree':>7}{'unread':>7}",
    ]
    for name, side in result["sides"].items():
        lines.append(
            f"{name:<25}{side['samples_per_s']:>10.2f}{side['tokens_per_s']:>10.1f}{side['start_s']:>9.1f}"
            f"{side['rss_mib']:>9.0f}{side['agree_with_plain_vllm']:>7.0%}{side['unreadable']:>7}"
        )
    lines.append(f"service on vLLM / plain vLLM samples/s: {result['ratio']:.2f}x (goal >= 0.8)")
    return "\n".join(lines)


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    sides = result["sides"]
    case = f"judge verify, SmolLM2-135M, CPU: {result['samples']} samples, <= {result['max_tokens']} tokens"
    out = []
    for name, baseline in (("plain vLLM", "plain vLLM LLM.chat, bfloat16"), ("service on transformers", None)):
        if baseline is None:
            baseline = "the service on transformers, float32"
        ours, base = sides["service on vLLM"], sides[name]
        out.append(
            {
                "case": case,
                "baseline": baseline,
                "ours": "service on vLLM, bfloat16, one /v1/score",
                "baseline_value": round(base["samples_per_s"], 2),
                "ours_value": round(ours["samples_per_s"], 2),
                "unit": "samples/s",
                "ratio": round(ours["samples_per_s"] / base["samples_per_s"], 2),
                "note": f"tokens/s {ours['tokens_per_s']:.0f} vs {base['tokens_per_s']:.0f}; start {ours['start_s']:.0f} s "
                f"vs {base['start_s']:.0f} s; RSS {ours['rss_mib']:.0f} vs {base['rss_mib']:.0f} MiB; "
                f"verdicts equal to plain vLLM's: {ours['agree_with_plain_vllm']:.0%} vs {base['agree_with_plain_vllm']:.0%}",
            }
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"
    result = run(args)
    text = report(result)
    print(text)
    write_rows("model_judge_speed", rows(result))
    (RESULTS / "model_judge_speed.log").write_text(text + "\n" + json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":  # vLLM's engine process re-imports this module
    main()
