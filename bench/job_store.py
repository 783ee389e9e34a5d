"""What a shared job store costs: ``/v1/jobs`` with the in-process store against sqlite and Redis.

The baseline is the store a one-process service has anyway (jobs in a dict); the shared stores are
what ``--api-workers N`` and replicas need. Each side is one ``rewardhub serve`` (one API process,
the same pool size, the same cores); the workload is ``--jobs`` jobs of ``--samples`` ``exact``
samples, all submitted at once, then each polled until done. Sides alternate over ``--rounds``;
medians are printed, and every side's results must agree with the baseline's.

    python bench/job_store.py [--jobs 200] [--samples 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _serve import start_service  # noqa: E402


async def run_jobs(url: str, jobs: int, samples: int) -> tuple[float, list[list[float]]]:
    body = {
        "verifier": "exact",
        "samples": [{"response": str(i % 7), "reference": str(i % 5)} for i in range(samples)],
    }
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=32)) as client:
        started = time.perf_counter()
        accepted = await asyncio.gather(*(client.post("/v1/jobs", json=body) for _ in range(jobs)))
        ids = [r.json()["job_id"] for r in accepted]

        async def wait(job_id: str) -> list[float]:
            while True:
                state = (await client.get(f"/v1/jobs/{job_id}")).json()
                if state["status"] == "done":
                    return [r["score"] for r in state["results"]]
                if state["status"] == "failed":
                    raise RuntimeError(state["error"])
                await asyncio.sleep(0.01)

        scores = await asyncio.gather(*(wait(j) for j in ids))
        return time.perf_counter() - started, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {
            "in-process": {},
            "sqlite": {"REWARDHUB_JOB_STORE_URL": f"sqlite:///{tmp}/jobs.sqlite3"},
            "redis": {"REWARDHUB_JOB_STORE_URL": args.redis},
        }
        times: dict[str, list[float]] = {name: [] for name in sides}
        agree = {name: True for name in sides}
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            baseline = None
            results = {}
            for name in order:
                process, url = start_service("--workers", "1", env={"REWARDHUB_LOG_LEVEL": "warning", **sides[name]})
                try:
                    asyncio.run(run_jobs(url, 5, args.samples))  # warm-up
                    elapsed, scores = asyncio.run(run_jobs(url, args.jobs, args.samples))
                finally:
                    process.terminate()
                    process.wait(30)
                times[name].append(elapsed)
                results[name] = scores
            baseline = results["in-process"]
            for name in sides:
                agree[name] &= results[name] == baseline
        base = statistics.median(times["in-process"])
        print(f"{args.jobs} jobs x {args.samples} exact samples, 1 API process, {args.rounds} alternating rounds")
        for name in sides:
            median = statistics.median(times[name])
            print(
                f"  {name:<11} median {median:6.2f} s  {args.jobs / median:7.1f} jobs/s  "
                f"{median / base:5.2f}x the in-process time  results agree: {agree[name]}"
            )


if __name__ == "__main__":
    main()
