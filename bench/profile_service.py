"""Where a sample's time goes inside the service: CPU per sample of the API process and of the
workers, and (with py-spy installed) the functions that hold the API process's GIL.

    python bench/profile_service.py --data-dir DIR [--workers 2] [--batch 256] [--rounds 4] [--py-spy]

Sends the 800 Qwen2.5-Math chain-of-thought responses in batches of ``--batch`` (two requests in
flight, as a trainer overlapping its steps) ``--rounds`` times to ``rewardhub serve`` and prints
the CPU seconds the API process and the worker processes spent per sample, next to the scoring
time the workers report (``elapsed_ms``): the difference is what the service costs. With
``--py-spy``, ``py-spy record --gil`` samples the API process meanwhile and the top frames (own
time) are printed: this is how the per-call futures of the old pool hand-off were found.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_data_dir, data_file  # noqa: E402
from _serve import start_service  # noqa: E402
from math_throughput import cpu_seconds  # noqa: E402


def top_frames(raw: Path, n: int) -> list[tuple[float, str]]:
    own: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        own[stack.split(";")[-1]] += int(count)
    total = sum(own.values()) or 1
    return [(c / total, frame) for frame, c in own.most_common(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_dir(parser)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--py-spy", action="store_true", help="sample the API process with py-spy (if installed)")
    args = parser.parse_args()
    samples = []
    for line in data_file(args.data_dir, "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        samples += [{"reference": record["gt"], "response": r} for r in record["code"]]
    batches = [samples[i : i + args.batch] for i in range(0, len(samples), args.batch)] * args.rounds
    process, url = start_service("--workers", str(args.workers))
    spy = None
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "api.txt"
        try:
            with httpx.Client(base_url=url, timeout=600) as client:
                client.post("/v1/score", json={"verifier": "math", "samples": samples[:64]}).raise_for_status()
                spy_bin = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
                if args.py_spy and spy_bin:
                    command = [spy_bin, "record", "--gil", "-r", "200", "-f", "raw", "-o", str(raw)]
                    spy = subprocess.Popen([*command, "-p", str(process.pid)], stdout=subprocess.DEVNULL)
                    time.sleep(1)
                before = cpu_seconds(process.pid)
                scoring_ms = 0.0
                started = time.perf_counter()

                def send(batch: list[dict]) -> float:
                    response = client.post("/v1/score", json={"verifier": "math", "samples": batch})
                    response.raise_for_status()
                    return sum(r["elapsed_ms"] for r in response.json()["results"])

                with ThreadPoolExecutor(2) as pool:
                    scoring_ms = sum(pool.map(send, batches))
                wall = time.perf_counter() - started
                after = cpu_seconds(process.pid)
        finally:
            if spy is not None:
                spy.send_signal(2)
                spy.wait(timeout=60)
            process.terminate()
            process.wait(timeout=30)
        n = sum(map(len, batches))
        api_us, workers_us = (1e6 * (after[i] - before[i]) / n for i in (0, 1))
        print(f"{n} samples in batches of {args.batch}, {args.workers} workers: {n / wall:.0f} samples/s")
        print(f"CPU per sample: API process {api_us:.0f} us, workers {workers_us:.0f} us")
        print(
            f"scoring per sample as the workers time it (wall clock, so a busy machine inflates it): {1000 * scoring_ms / n:.0f} us"
        )
        if spy is not None and raw.exists():
            print("API process, functions holding the GIL (own time):")
            for share, frame in top_frames(raw, 25):
                print(f"  {share:6.1%}  {frame}")


if __name__ == "__main__":
    main()
