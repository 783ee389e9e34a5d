"""Throughput of ``math`` scoring on real chain-of-thought outputs: plain math-verify in one
process against the running service, on the same samples, in one run.

    python bench/math_throughput.py [--workers 2] [--batch 64] [--gsm8k 800]

The samples are real model outputs, in the groups GRPO sends (one gold, G responses): the 100 x 8
Qwen2.5-Math chain-of-thought responses to MATH problems and GSM8K solutions (4 per problem).

(a) plain math-verify: ``verify(parse(gold), parse(response))`` in a single-process loop, as a
    trainer's reward function would call it (gold wrapped in ``\\boxed{}`` when bare).
(b) ``rewardhub serve --workers N`` started as a subprocess, the samples sent to
    ``POST /v1/score`` in batches of whole groups, one request at a time.
(c) for reference, our verifier in a single-process loop (no service, no second core).

Prints items/s of each (the best of ``--repeats`` alternating rounds, so that a noisy neighbour
on a shared machine penalises both sides alike), the ratio (b)/(a), and the p50/p99 latency of a
batch request and of one sample as the service timed it (``elapsed_ms``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _serve import start_service  # noqa: E402

DATA = Path("/work/shared/data")


def load_samples(gsm8k: int) -> list[dict[str, str]]:
    """Real outputs, grouped by problem (qwen: 8 per MATH problem; GSM8K: 4 per problem)."""
    samples = []
    for line in (DATA / "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        samples += [{"reference": record["gt"], "response": r, "group": f"q{record['idx']}"} for r in record["code"]]
    for i, line in enumerate((DATA / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()):
        if 4 * i >= gsm8k:
            break
        record = json.loads(line)
        gold = record["ground_truth"].rsplit("A:", 1)[-1].strip()
        for key in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
            samples.append({"reference": gold, "response": record[key]["solution"], "group": f"g{i}"})
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def plain_math_verify(samples: list[dict[str, str]]) -> float:
    from math_verify import parse, verify

    started = time.perf_counter()
    for sample in samples:
        gold = sample["reference"]
        gold = gold if "\\boxed" in gold or "$" in gold else "\\boxed{" + gold + "}"
        verify(parse(gold), parse(sample["response"]))
    return len(samples) / (time.perf_counter() - started)


def ours_in_process(samples: list[dict[str, str]]) -> float:
    from rewardhub.verifiers.math.verifier import MathVerifier

    from rewardhub.types import Sample

    verifier, config = MathVerifier(), MathVerifier.Config()
    started = time.perf_counter()
    for sample in samples:
        verifier.score(Sample(response=sample["response"], reference=sample["reference"]), config)
    return len(samples) / (time.perf_counter() - started)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU time (user + system) of the service process and of all its worker processes."""
    main = psutil.Process(pid)
    children = 0.0
    for child in main.children(recursive=True):
        try:
            children += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return sum(main.cpu_times()[:2]), children


def through_service(
    url: str, samples: list[dict[str, str]], batch: int, in_flight: int
) -> tuple[float, list[float], list[float]]:
    """Batches sent with ``in_flight`` requests outstanding, as a trainer overlapping its steps
    would: with one at a time the workers idle while the API reads and answers each request."""
    request_ms: list[float] = []
    sample_ms: list[float] = []
    batches = [samples[i : i + batch] for i in range(0, len(samples), batch)]
    with httpx.Client(base_url=url, timeout=600) as client:

        def send(chunk: list[dict[str, str]]) -> tuple[float, list[float]]:
            began = time.perf_counter()
            response = client.post("/v1/score", json={"verifier": "math", "samples": chunk})
            response.raise_for_status()
            return (time.perf_counter() - began) * 1000, [r["elapsed_ms"] for r in response.json()["results"]]

        started = time.perf_counter()
        with ThreadPoolExecutor(in_flight) as pool:
            for took, per_sample in pool.map(send, batches):
                request_ms.append(took)
                sample_ms += per_sample
        rate = len(samples) / (time.perf_counter() - started)
    return rate, request_ms, sample_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64, help="samples per request (whole groups of 8 and 4)")
    parser.add_argument("--gsm8k", type=int, default=800, help="how many GSM8K solutions to add to the 800 Qwen ones")
    parser.add_argument(
        "--in-flight", type=int, default=2, help="requests outstanding at once (1: strictly one after another)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds; the best of each side counts")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    samples = load_samples(args.gsm8k)
    print(
        f"{len(samples)} real responses ({sum(len(s['response']) for s in samples) // len(samples)} chars on average), "
        f"{args.workers} workers, {os.cpu_count()} cores, {args.in_flight} requests in flight"
    )

    baseline = single = service = 0.0
    request_ms: list[float] = []
    sample_ms: list[float] = []
    cpu = (0.0, 0.0)
    for _ in range(args.repeats):
        baseline = max(baseline, plain_math_verify(samples))
        process, url = start_service(
            "--workers", str(args.workers)
        )  # a fresh service: its caches start cold every round
        try:
            warm = [{"reference": str(n), "response": f"\\boxed{{{n}}}"} for n in range(64)]  # imports only
            httpx.post(url + "/v1/score", json={"verifier": "math", "samples": warm}, timeout=600).raise_for_status()
            before = cpu_seconds(process.pid)
            rate, requests, per_sample = through_service(url, samples, args.batch, args.in_flight)
            after = cpu_seconds(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)
        if rate > service:
            service, request_ms, sample_ms = rate, requests, per_sample
            cpu = (after[0] - before[0], after[1] - before[1])
    single = ours_in_process(samples)  # caches cold here as well: a separate process state

    print(f"{'(a) plain math-verify, 1 process':<44} {baseline:>8.0f} items/s")
    print(
        f"{f'(b) rewardhub service, {args.workers} workers':<44} {service:>8.0f} items/s   ratio (b)/(a) {service / baseline:.2f}x"
    )
    print(
        f"{'(c) rewardhub math verifier, 1 process':<44} {single:>8.0f} items/s   ratio (c)/(a) {single / baseline:.2f}x"
    )
    print(
        f"batch of {args.batch}: p50 {percentile(request_ms, 0.5):.1f} ms, p99 {percentile(request_ms, 0.99):.1f} ms; "
        f"one sample (service-timed): p50 {percentile(sample_ms, 0.5):.2f} ms, p99 {percentile(sample_ms, 0.99):.2f} ms"
    )
    print(
        f"CPU per sample inside the service: API process {1000 * cpu[0] / len(samples):.2f} ms, "
        f"worker processes {1000 * cpu[1] / len(samples):.2f} ms"
    )


if __name__ == "__main__":
    main()
