"""Throughput of ``math`` scoring on real chain-of-thought outputs: the service against a warm
math-verify process pool with the same number of processes, on the same cores, in one run.

    python bench/math_throughput.py --data-dir DIR [--workers 2] [--batch 256] [--rounds 5]

The samples are real model outputs (``--data-dir`` holds them): the 100 x 8 Qwen2.5-Math
chain-of-thought responses to MATH problems and ``--gsm8k`` GSM8K solutions, in trainer-sized
batches of ``--batch`` samples sent one after another (a trainer scores a step's rollouts at once).

Sides, alternated round by round, each round on a fresh service and a fresh pool (so parse caches
start cold on both sides); medians are reported:

(a) the baseline a careful user picks: math-verify in a warm ``ProcessPoolExecutor`` of
    ``--workers`` processes (verl's fix for math-verify's per-call cost), scoring each batch with
    verl's recipe (``math_metric`` with LaTeX gold and expression+LaTeX prediction extraction, the
    gold wrapped in ``\\boxed{}``), the batch split into one chunk per process;
(b) ``rewardhub serve --workers N``, each batch one ``POST /v1/score``;
(c) our verifier in one process, no service, warmed as the service's workers are (its
    ``warm_up``, then cold parse caches): times ``--workers`` is the ceiling (b) aims at;
(d) our verifier in ``--workers`` bare processes at once, no service and no messages between
    them, each scoring every ``--workers``-th run of 32 samples (as the pool deals them out),
    started together once all are warm: what these cores give when nothing but scoring runs.
    (d)/((c) x workers) is the share of the ceiling that parallel processes reach on this
    machine at all (shared caches, memory bandwidth, a hypervisor's vCPUs); (b)/(d) is what
    the service keeps of that.

Printed: samples/s of each, (b)/(a), (b)/((c) x workers), (d)/((c) x workers), (b)/(d), CPU per
sample inside the service (API process and workers), and how often (a) and (b) agree on the verdict.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_data_dir, alternate, data_file, median, write_rows  # noqa: E402
from _serve import start_service  # noqa: E402

from rewardhub.execution.pool import MAX_CHUNK  # noqa: E402


def load_samples(data_dir: Path, gsm8k: int) -> list[dict[str, str]]:
    """Real outputs, grouped by problem (qwen: 8 per MATH problem; GSM8K: 4 per problem)."""
    samples = []
    for line in data_file(data_dir, "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        samples += [{"reference": record["gt"], "response": r, "group": f"q{record['idx']}"} for r in record["code"]]
    if gsm8k:
        lines = data_file(data_dir, "gsm8k_example_model_solutions.jsonl").read_text().splitlines()
        for i, line in enumerate(lines[: (gsm8k + 3) // 4]):
            record = json.loads(line)
            gold = record["ground_truth"].rsplit("A:", 1)[-1].strip()
            for key in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
                samples.append({"reference": gold, "response": record[key]["solution"], "group": f"g{i}"})
    return samples


# --- (a) the warm math-verify pool -----------------------------------------------------------
_METRIC = None


def _pool_init() -> None:
    global _METRIC
    from math_verify.metric import math_metric
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

    _METRIC = math_metric(
        gold_extraction_target=(LatexExtractionConfig(),),
        pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()),
    )
    _METRIC(["\\boxed{1}"], ["\\boxed{1}"])  # imports and grammar warm before any timing


def _pool_chunk(pairs: list[tuple[str, str]]) -> list[bool]:
    """verl's math-verify reward: gold boxed, any exception is a wrong answer (verl's choice)."""
    out = []
    for gold, response in pairs:
        try:
            score, _ = _METRIC(["\\boxed{" + gold + "}"], [response])
        except Exception:
            score = 0.0
        out.append(score >= 1.0)
    return out


def pool_run(pool: ProcessPoolExecutor, batches: list[list[dict[str, str]]], workers: int) -> tuple[float, list[bool]]:
    verdicts: list[bool] = []
    started = time.perf_counter()
    for batch in batches:
        size = -(-len(batch) // workers)
        chunks = [[(s["reference"], s["response"]) for s in batch[i : i + size]] for i in range(0, len(batch), size)]
        for part in pool.map(_pool_chunk, chunks):
            verdicts += part
    return sum(map(len, batches)) / (time.perf_counter() - started), verdicts


# --- (b) the service ---------------------------------------------------------------------------
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


def service_run(url: str, batches: list[list[dict[str, str]]]) -> tuple[float, list[bool]]:
    verdicts: list[bool] = []
    with httpx.Client(base_url=url, timeout=600) as client:
        started = time.perf_counter()
        for batch in batches:
            response = client.post("/v1/score", json={"verifier": "math", "samples": batch})
            response.raise_for_status()
            verdicts += [r["status"] == "ok" and r["score"] >= 1.0 for r in response.json()["results"]]
    return sum(map(len, batches)) / (time.perf_counter() - started), verdicts


# --- (c) in process ----------------------------------------------------------------------------
def in_process(samples: list[dict[str, str]]) -> float:
    from rewardhub.types import Sample
    from rewardhub.verifiers.math.verifier import MathVerifier

    MathVerifier.warm_up()  # as the service's fork server does before forking its workers
    verifier, config = MathVerifier(), MathVerifier.Config()
    objects = [Sample(response=s["response"], reference=s["reference"]) for s in samples]
    started = time.perf_counter()
    for sample in objects:
        verifier.score(sample, config)
    return len(samples) / (time.perf_counter() - started)


# --- (d) bare processes in parallel ------------------------------------------------------------
RUN = MAX_CHUNK  # samples per run dealt to one process: the pool's largest chunk


def _bare_process(share: list[dict[str, str]], ready: Any, go: Any, finished: Any) -> None:
    from rewardhub.types import Sample
    from rewardhub.verifiers.math.verifier import MathVerifier

    MathVerifier.warm_up()
    verifier, config = MathVerifier(), MathVerifier.Config()
    objects = [Sample(response=s["response"], reference=s["reference"]) for s in share]
    ready.release()
    go.wait()
    for sample in objects:
        verifier.score(sample, config)
    finished.put(time.perf_counter())  # CLOCK_MONOTONIC: one clock for every process


def parallel_bare(samples: list[dict[str, str]], workers: int) -> float:
    """Samples/s of ``workers`` fresh processes scoring their shares at once, timed from a common start."""
    ctx = multiprocessing.get_context("spawn")
    ready, go, finished = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    runs = [samples[i : i + RUN] for i in range(0, len(samples), RUN)]
    shares = [[s for run in runs[k::workers] for s in run] for k in range(workers)]
    processes = [ctx.Process(target=_bare_process, args=(share, ready, go, finished)) for share in shares]
    for process in processes:
        process.start()
    for _ in processes:
        ready.acquire()
    started = time.perf_counter()
    go.set()
    ends = [finished.get(timeout=600) for _ in processes]
    for process in processes:
        process.join()
    return len(samples) / (max(ends) - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_dir(parser)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256, help="samples per request / per pool batch")
    parser.add_argument("--gsm8k", type=int, default=800, help="GSM8K solutions added to the 800 Qwen ones")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; medians are reported")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    samples = load_samples(args.data_dir, args.gsm8k)
    batches = [samples[i : i + args.batch] for i in range(0, len(samples), args.batch)]
    print(
        f"{len(samples)} real responses ({sum(len(s['response']) for s in samples) // len(samples)} chars on average), "
        f"batches of {args.batch}, {args.workers} processes on each side, {os.cpu_count()} cores, {args.rounds} rounds"
    )
    seen: dict[str, list[bool]] = {}
    cpu: list[tuple[float, float]] = []

    def baseline() -> float:
        with ProcessPoolExecutor(args.workers, initializer=_pool_init) as pool:
            list(pool.map(_pool_chunk, [[("1", "\\boxed{1}")]] * (4 * args.workers)))  # every process warm
            rate, seen["baseline"] = pool_run(pool, batches, args.workers)
        return rate

    def service() -> float:
        process, url = start_service("--workers", str(args.workers))
        try:
            warm = [{"reference": str(n), "response": f"\\boxed{{{n}}}"} for n in range(64)]
            httpx.post(url + "/v1/score", json={"verifier": "math", "samples": warm}, timeout=600).raise_for_status()
            before = cpu_seconds(process.pid)
            rate, seen["ours"] = service_run(url, batches)
            after = cpu_seconds(process.pid)
            cpu.append((after[0] - before[0], after[1] - before[1]))
        finally:
            process.terminate()
            process.wait(timeout=30)
        return rate

    def ceiling() -> float:  # a fresh interpreter each round: parse caches start cold, lazy imports warm
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as one:
            return one.submit(in_process, samples).result()

    def bare() -> float:
        return parallel_bare(samples, args.workers)

    sides = {"service": service, "baseline": baseline, "in_process": ceiling, "bare_parallel": bare}
    rates = alternate(sides, args.rounds)
    a, b, c = median(rates["baseline"]), median(rates["service"]), median(rates["in_process"])
    d = median(rates["bare_parallel"])
    agree = sum(x == y for x, y in zip(seen["baseline"], seen["ours"], strict=True)) / len(samples)
    api_ms = median([1000 * api / len(samples) for api, _ in cpu])
    worker_ms = median([1000 * workers / len(samples) for _, workers in cpu])
    for name, values in rates.items():
        print(f"rounds, {name}: {', '.join(f'{v:.0f}' for v in values)}")
    print(f"{f'(a) math-verify, warm pool of {args.workers}':<44} {a:>8.0f} samples/s")
    print(f"{f'(b) rewardhub serve --workers {args.workers}':<44} {b:>8.0f} samples/s   (b)/(a) {b / a:.2f}x")
    print(
        f"{'(c) our math verifier, 1 process':<44} {c:>8.0f} samples/s   (b)/((c) x {args.workers}) {b / (c * args.workers):.2f}"
    )
    print(
        f"{f'(d) our math verifier, {args.workers} bare processes':<44} {d:>8.0f} samples/s   "
        f"(d)/((c) x {args.workers}) {d / (c * args.workers):.2f}   (b)/(d) {b / d:.2f}"
    )
    print(f"CPU per sample inside the service: API process {api_ms:.3f} ms, workers {worker_ms:.3f} ms")
    print(f"verdict agreement (a) vs (b): {agree:.1%} of {len(samples)} samples")
    write_rows(
        "math_throughput",
        [
            {
                "case": f"{len(samples)} real CoT responses, batches of {args.batch}, {args.workers} processes each",
                "baseline": f"math-verify, warm pool of {args.workers}",
                "baseline_value": round(a),
                "ours_value": round(b),
                "unit": "samples/s",
                "ratio": round(b / a, 2),
                "note": f"{b / (c * args.workers):.2f} of in-process x {args.workers} (goal >= 0.67; "
                f"{args.workers} bare processes with no service reach {d / (c * args.workers):.2f}); "
                f"verdicts agree {agree:.1%}",
            }
        ],
    )


if __name__ == "__main__":
    main()
