"""Service overhead, against a bare FastAPI endpoint doing the same JSON in and out, and
OpenRLHF's load shape (many concurrent one-sample ``/get_reward`` calls) against the batched path.

    python bench/overhead.py --data-dir DIR [--workers 2] [--samples 10000] [--concurrent 1000] [--rounds 3]
                             [--api-workers 1,2]

Part 1, overhead (``exact``, which runs inline in the API process, so both sides do the same work
in one process): (a) ``bench/_bare_app.py`` under uvicorn with uvloop and httptools, (b)
``rewardhub serve``. Cases: ``--samples`` samples in one request, and ``--concurrent`` concurrent
one-sample requests. Sides alternate round by round; medians; verdicts compared sample by sample.

Part 2, OpenRLHF's pattern (``math`` in the worker pool, on real CoT responses): the same samples
sent as ``--concurrent`` concurrent one-sample ``POST /get_reward`` calls, and as batches of 256
through ``POST /v1/score``, each side on a fresh service of the same configuration (so parse caches
start cold for both), sides alternated; once per ``--api-workers`` count (API processes,
each with ``--workers`` pool processes: one process's event loop is the ceiling of one-sample
calls, so the row with two shows what a second one buys on the same cores). Goal: the single calls reach at least half the batched samples/s.

The one-sample calls come from ``bench/_http_load.py``: each request pre-encoded, on its own
connection (as OpenRLHF's ``requests.post``), over asyncio streams. A full client (aiohttp) costs
about 0.4 ms of CPU per request here, as much as the service, and shares its 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, add_data_dir, alternate, data_file, median, write_rows  # noqa: E402
from _http_load import post_all  # noqa: E402
from _serve import start_service  # noqa: E402

from rewardhub.server import free_port  # noqa: E402


def exact_samples(n: int) -> list[dict]:
    return [{"id": str(i), "response": f"answer {i % 97}", "reference": f"answer {i % 89}"} for i in range(n)]


def start_bare() -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "_bare_app:app", "--app-dir", "bench", "--port", str(port)]
    command += ["--loop", "uvloop", "--http", "httptools", "--log-level", "warning", "--backlog", "4096"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.post(url + "/v1/score", json={"samples": []}).raise_for_status()
            return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the bare app did not start")


def one_request(url: str, samples: list[dict]) -> tuple[float, list[float]]:
    body = {"verifier": "exact", "samples": samples}
    with httpx.Client(timeout=600) as client:
        client.post(url + "/v1/score", json=body).raise_for_status()  # warm-up
        started = time.perf_counter()
        response = client.post(url + "/v1/score", json=body)
        response.raise_for_status()
        took = time.perf_counter() - started
    return len(samples) / took, [r["score"] for r in response.json()["results"]]


def concurrent(url: str, path: str, bodies: list[dict], pick) -> tuple[float, list[float]]:  # noqa: ANN001
    """All bodies at once, one connection each, from the lean load generator (``_http_load``):
    a full HTTP client spends as much CPU per request as the servers it would measure."""
    post_all(url, path, bodies[:50])  # warm-up: imports, first connections
    rate, answers = post_all(url, path, bodies)
    return rate, [pick(answer) for answer in answers]


def part_overhead(args: argparse.Namespace, rows: list[dict]) -> None:
    big = exact_samples(args.samples)
    singles = [{"verifier": "exact", "samples": [s]} for s in exact_samples(args.concurrent)]
    seen: dict[str, list[float]] = {}

    def side(name: str, start) -> dict[str, float]:  # noqa: ANN001
        process, url = start()
        try:
            rate_big, seen[name + "_big"] = one_request(url, big)
            pick = lambda answer: answer["results"][0]["score"]  # noqa: E731
            rate_singles, seen[name + "_singles"] = concurrent(url, "/v1/score", singles, pick)
        finally:
            process.terminate()
            process.wait(timeout=30)
        return {"big": rate_big, "singles": rate_singles}

    results: dict[str, list[dict[str, float]]] = {"ours": [], "bare": []}
    start_ours = lambda: start_service("--workers", str(args.workers))  # noqa: E731
    alternate(
        {
            "ours": lambda: results["ours"].append(side("ours", start_ours)) or 0.0,
            "bare": lambda: results["bare"].append(side("bare", start_bare)) or 0.0,
        },
        args.rounds,
    )
    agree = seen["ours_big"] == seen["bare_big"] and seen["ours_singles"] == seen["bare_singles"]
    print(f"{'case (exact, inline)':<46} {'bare FastAPI':>14} {'rewardhub':>12} {'ratio':>7}")
    for case, label in (
        ("big", f"{args.samples} samples, 1 request"),
        ("singles", f"{args.concurrent} concurrent 1-sample requests"),
    ):
        bare = median([r[case] for r in results["bare"]])
        ours = median([r[case] for r in results["ours"]])
        print(f"{label:<46} {bare:>14.0f} {ours:>12.0f} {ours / bare:>6.2f}x")
        rows.append(
            {
                "case": f"exact: {label}",
                "baseline": "bare FastAPI endpoint, same JSON in and out",
                "baseline_value": round(bare),
                "ours_value": round(ours),
                "unit": "samples/s",
                "ratio": round(ours / bare, 2),
                "note": f"verdicts identical: {agree}",
            }
        )
    print(f"verdicts identical on every sample: {agree}")


def part_openrlhf(args: argparse.Namespace, rows: list[dict]) -> None:
    for api_workers in args.api_workers:
        openrlhf_pattern(args, api_workers, rows)


def openrlhf_pattern(args: argparse.Namespace, api_workers: int, rows: list[dict]) -> None:
    samples = []
    for line in data_file(args.data_dir, "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        samples += [{"reference": record["gt"], "response": r} for r in record["code"]]
    samples = (samples * (1 + args.concurrent // len(samples)))[: args.concurrent]
    singles = [{"query": ["Q: " + s["response"]], "prompts": ["Q: "], "labels": [s["reference"]]} for s in samples]
    seen: dict[str, list[float]] = {}

    def batched(url: str) -> float:
        scores: list[float] = []
        with httpx.Client(base_url=url, timeout=600) as client:
            started = time.perf_counter()
            for i in range(0, len(samples), 256):
                response = client.post("/v1/score", json={"verifier": "math", "samples": samples[i : i + 256]})
                response.raise_for_status()
                scores += [r["score"] for r in response.json()["results"]]
            rate = len(samples) / (time.perf_counter() - started)
        seen["batched"] = scores
        return rate

    def single(url: str) -> float:
        rate, seen["single"] = concurrent(url, "/get_reward", singles, lambda a: a["rewards"][0])
        return rate

    serve_args = ("--workers", str(args.workers), "--api-workers", str(api_workers))

    def on_fresh_service(side: Callable[[str], float]) -> Callable[[], float]:
        def run() -> float:
            # Each side on its own fresh service: the workers' parse caches start cold for both
            # (on a shared one, the side that ran second met every answer already parsed).
            process, url = start_service(*serve_args)
            try:
                return side(url)
            finally:
                process.terminate()
                process.wait(timeout=30)

        return run

    rates = alternate({"batched": on_fresh_service(batched), "single": on_fresh_service(single)}, args.rounds)
    b, s = median(rates["batched"]), median(rates["single"])
    agree = sum(x == y for x, y in zip(seen["batched"], seen["single"], strict=True)) / len(samples)
    print(
        f"--api-workers {api_workers} --workers {args.workers}: "
        f"math on {len(samples)} real CoT responses: batches of 256 {b:.0f} samples/s; "
        f"{args.concurrent} concurrent one-sample /get_reward {s:.0f} samples/s: {s / b:.2f} of batched (goal >= 0.5)"
    )
    print(f"verdict agreement single vs batched: {agree:.1%}")
    rows.append(
        {
            "case": f"math: {args.concurrent} concurrent one-sample /get_reward (OpenRLHF)"
            + f", --api-workers {api_workers} --workers {args.workers}",
            "baseline": "the same service, batches of 256 on /v1/score",
            "baseline_value": round(b),
            "ours_value": round(s),
            "unit": "samples/s",
            "ratio": round(s / b, 2),
            "note": f"goal >= 0.5; verdicts agree {agree:.1%}",
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_dir(parser)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--concurrent", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--api-workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2],
        help="API process counts to run part 2 with, comma-separated (each process has --workers); default 1,2",
    )
    args = parser.parse_args()
    print(f"rewardhub overhead, {args.workers} workers, {os.cpu_count()} cores, {args.rounds} alternating rounds")
    rows: list[dict] = []
    part_overhead(args, rows)
    part_openrlhf(args, rows)
    write_rows("overhead", rows)


if __name__ == "__main__":
    main()
