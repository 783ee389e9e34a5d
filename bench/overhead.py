"""Service overhead: exact match on 10,000 samples in one request, and 1,000 concurrent
single-sample requests (OpenRLHF's current one-sample-per-request mode).

Also answers "inline or pool?" for cheap verifiers: the same work through ``exact`` (inline in the
API process) and ``exact_pooled`` (the same class, routed through the worker pool).

    python bench/overhead.py [--workers 2] [--samples 10000] [--concurrent 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _serve import start_service  # noqa: E402

POOLED_PLUGIN = textwrap.dedent(
    """
    from rewardhub.verifiers.exact import ExactVerifier

    class PooledExact(ExactVerifier):
        name = "exact_pooled"
        inline = False
    """
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def samples(n: int) -> list[dict]:
    return [{"id": str(i), "response": f"answer {i % 97}", "reference": f"answer {i % 89}"} for i in range(n)]


def one_big_request(url: str, verifier: str, n: int, repeats: int = 5) -> tuple[float, float]:
    body = {"verifier": verifier, "samples": samples(n)}
    times = []
    with httpx.Client(timeout=600) as client:
        client.post(url + "/v1/score", json=body).raise_for_status()  # warm-up
        for _ in range(repeats):
            started = time.perf_counter()
            client.post(url + "/v1/score", json=body).raise_for_status()
            times.append(time.perf_counter() - started)
    best = min(times)
    return n / best, statistics.median(times) * 1000


async def concurrent_singles(url: str, verifier: str, n: int) -> tuple[float, float, float]:
    """aiohttp as the load generator: httpx's client costs more CPU per request than our server."""
    import aiohttp

    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=n)
    async with aiohttp.ClientSession(url, connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as client:

        async def one(i: int) -> None:
            started = time.perf_counter()
            body = {
                "verifier": verifier,
                "samples": [{"response": f"answer {i % 97}", "reference": f"answer {i % 89}"}],
            }
            async with client.post("/v1/score", json=body) as r:
                r.raise_for_status()
                await r.read()
            latencies.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(one(i) for i in range(50)))  # warm the connections
        latencies.clear()
        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - started
    return n / wall, percentile(latencies, 0.5), percentile(latencies, 0.99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--concurrent", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plugin = Path(tmp) / "pooled.py"
        plugin.write_text(POOLED_PLUGIN)
        proc, url = start_service("--workers", str(args.workers), "--plugin", str(plugin))
        try:
            print(f"rewardhub overhead, {args.workers} workers, {os.cpu_count()} cores")
            print(f"{'case':<44} {'items/s':>10} {'p50 ms':>9} {'p99 ms':>9}")
            for verifier in ("exact", "exact_pooled"):
                rate, median_ms = one_big_request(url, verifier, args.samples)
                print(
                    f"{verifier + f': {args.samples} samples, 1 request':<44} {rate:>10.0f} {median_ms:>9.1f} {'':>9}"
                )
            for verifier in ("exact", "exact_pooled"):
                rate, p50, p99 = asyncio.run(concurrent_singles(url, verifier, args.concurrent))
                print(
                    f"{verifier + f': {args.concurrent} concurrent single requests':<44} {rate:>10.0f} {p50:>9.1f} {p99:>9.1f}"
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
