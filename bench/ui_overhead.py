"""What the operator page costs the score path: the same requests to a service with the page on
(its statistics observed in the one score path) and to one with it off (``ui_enabled: false``, the
baseline: exactly what a user who does not want the page runs).

Both services run side by side on the same cores; requests alternate between them (the order
flips every round), and medians are reported. Two shapes: one request of 10,000 exact-match
samples (observe work grows with the batch) and sequential single-sample requests (the fixed cost
per request). Verdict agreement: both sides must give the same scores and statuses.

    python bench/ui_overhead.py [--workers 1] [--samples 10000] [--singles 300] [--rounds 7] [--store sqlite]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _serve import start_service  # noqa: E402


def samples(n: int) -> list[dict]:
    return [{"id": str(i), "response": f"answer {i % 97}", "reference": f"answer {i % 89}"} for i in range(n)]


def timed(client: httpx.Client, url: str, body: dict) -> tuple[float, list[tuple[float, str]]]:
    started = time.perf_counter()
    answer = client.post(url + "/v1/score", json=body, headers={"X-Rewardhub-Run": "bench"})
    elapsed = time.perf_counter() - started
    answer.raise_for_status()
    return elapsed, [(r["score"], r["status"]) for r in answer.json()["results"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--singles", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory", help="the page's store")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="rewardhub-ui-bench-")
    store = "memory" if args.store == "memory" else f"sqlite:///{tmp}/ui.db"
    on, on_url = start_service("--workers", str(args.workers), env={"REWARDHUB_UI_STORE": store})
    off, off_url = start_service("--workers", str(args.workers), env={"REWARDHUB_UI_ENABLED": "false"})
    sides = {"page on": on_url, "page off": off_url}
    big = {"verifier": "exact", "samples": samples(args.samples)}
    single = [{"verifier": "exact", "samples": [s]} for s in samples(args.singles)]
    big_times: dict[str, list[float]] = {name: [] for name in sides}
    single_times: dict[str, list[float]] = {name: [] for name in sides}
    verdicts: dict[str, list[tuple[float, str]]] = {}
    try:
        with httpx.Client(timeout=600) as client:
            for url in sides.values():  # warm-up
                timed(client, url, big)
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
                for name in order:
                    elapsed, verdict = timed(client, sides[name], big)
                    big_times[name].append(elapsed)
                    verdicts[name] = verdict
                    started = time.perf_counter()
                    for body in single:
                        timed(client, sides[name], body)
                    single_times[name].append((time.perf_counter() - started) / len(single))
    finally:
        for process in (on, off):
            process.terminate()
            process.wait(timeout=30)

    print(f"workers={args.workers} samples={args.samples} singles={args.singles} rounds={args.rounds} store={store}")
    for name in sides:
        big_ms = statistics.median(big_times[name]) * 1000
        single_ms = statistics.median(single_times[name]) * 1000
        print(
            f"{name:>9}: {args.samples} samples in one request {big_ms:8.1f} ms median "
            f"({args.samples / (big_ms / 1000):,.0f} samples/s); single-sample request {single_ms:6.2f} ms median"
        )
    on_big, off_big = (statistics.median(big_times[n]) for n in sides)
    on_one, off_one = (statistics.median(single_times[n]) for n in sides)
    print(f"page on / page off: big request x{on_big / off_big:.3f}, single request x{on_one / off_one:.3f}")
    agree = sum(a == b for a, b in zip(verdicts["page on"], verdicts["page off"], strict=True))
    print(f"verdict agreement: {agree}/{len(verdicts['page on'])}")


if __name__ == "__main__":
    main()
