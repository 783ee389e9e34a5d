"""Load and fault benchmark: the service under sustained load against a bare FastAPI + math-verify
process pool (``baseline``: bench/_bare_pool_app.py, what a user builds instead), then local mode
against Celery mode.

    python bench/load.py [--duration 60] [--modes baseline,local,celery,fault,lost-worker] [--workers 2]

For each mode the service runs as real processes on loopback (``rewardhub serve``; in Celery
mode plus ``--workers`` processes of ``rewardhub worker`` on the Redis at 127.0.0.1:6379) and
is driven, for ``--duration`` seconds, by two bounded request loops at once:

- ``--single-clients`` clients sending single-sample requests back to back (a trainer's
  per-rollout reward calls);
- ``--batch-clients`` clients sending ``--batch``-sample requests back to back (a GRPO step).

The verifier is ``math`` on synthetic chain-of-thought endings (a cheap, real CPU verifier).
Clients do not retry; a 429 makes a client wait its ``Retry-After`` and counts as a 429. The API
is started with ``--max-pending`` so the bounded queue is actually reached. Printed per mode:
throughput (samples/s and requests/s), p50/p99 latency of single and batch requests, the count
of 5xx answers and transport errors (goal: 0), of 429s, and the API process's RSS at start, at
its peak and at the end (goal: flat).

The fault run (``fault``) is Celery mode again, on Redis with its default settings (an hour of
visibility timeout), and kills one worker with kill -9 (it and its children) a third of the way
in. Every request is awaited to the end; samples lost = samples sent minus samples answered with
any status (goal: 0). Time to recover = from the kill until every request that was out at that
moment is answered (the API re-dispatches the dead worker's chunks once its liveness key
expires; the broker alone would hand them back after the hour). The statuses are printed too: a
``timeout`` is a judged sample, not a lost one.

The lost-worker run (``lost-worker``) is the operator's case: one ``/v1/score`` of ``--big``
(40,000) ``math`` samples on ``--workers`` Celery workers, with one whole worker kill -9'd
``--kill-at`` (2.5) seconds in. Its baseline is the same request with no kill, on the same
service, runs alternating (``--repeat`` each); printed: the medians of both, their difference
(what the loss cost), time to recover (kill to answer), samples lost, and whether every
verdict of the faulted run equals the clean run's.

The rows of the benchmark table (``bench/results/load.json``, ``bench/run_all.py``): each mode
against ``baseline`` (when both ran; ratio = mode / baseline samples/s), and the lost-worker run
(ratio = clean / faulted seconds).

Everything runs on this machine: the load generator shares the cores with the service, which
caps the numbers on a small machine; compare the modes with each other, run for run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rewardhub.server import free_port  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _common import write_rows  # noqa: E402


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"single": [], "batch": []})
    samples_sent: int = 0
    samples_ok: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)  # messages of non-ok results
    requests: int = 0
    status_5xx: int = 0
    status_429: int = 0
    transport_errors: int = 0
    other: dict[int, int] = field(default_factory=dict)
    spans: list[tuple[float, float]] = field(default_factory=list)  # (sent, answered) of every request
    kills: list[float] = field(default_factory=list)


def samples(n: int, offset: int) -> list[dict]:
    out = []
    for i in range(offset, offset + n):
        answer = i % 97
        response = f"Adding the terms step by step gives {answer}.\nSo the final answer is $\\boxed{{{answer}}}$."
        out.append({"response": response, "reference": str(answer if i % 3 else answer + 1)})
    return out


async def client_loop(url: str, kind: str, size: int, until: float, tally: Tally, drain_until: float) -> None:
    timeout = httpx.Timeout(max(60.0, drain_until - time.monotonic()))
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as http:
        offset = 0
        while time.monotonic() < until:
            body = {"verifier": "math", "samples": samples(size, offset)}
            offset += size
            tally.samples_sent += size
            started = time.perf_counter()
            sent = time.monotonic()
            try:
                response = await http.post("/v1/score", json=body)
            except httpx.HTTPError:
                tally.transport_errors += 1
                continue
            finally:
                tally.spans.append((sent, time.monotonic()))
            tally.requests += 1
            if response.status_code == 200:
                tally.latencies[kind].append(time.perf_counter() - started)
                for result in response.json()["results"]:
                    tally.statuses[result["status"]] = tally.statuses.get(result["status"], 0) + 1
                    if result["status"] != "ok":
                        tally.errors[result["error"]] = tally.errors.get(result["error"], 0) + 1
                tally.samples_ok = tally.statuses.get("ok", 0)
            elif response.status_code == 429:
                tally.status_429 += 1
                tally.samples_sent -= size  # refused up front: not sent, not lost
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))
            elif response.status_code >= 500:
                tally.status_5xx += 1
            else:
                tally.other[response.status_code] = tally.other.get(response.status_code, 0) + 1


class RssSampler:
    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.start = self.peak = self.last = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            try:
                self.last = self.process.memory_info().rss
            except psutil.NoSuchProcess:
                return
            self.peak = max(self.peak, self.last)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Service:
    """``rewardhub serve`` and, in Celery mode, its workers, as subprocesses of this script."""

    def __init__(self, mode: str, workers: int, max_pending: int, logs: Path | None = None) -> None:
        self.mode = mode
        self.port = free_port()
        self.env = {**os.environ, "REWARDHUB_MAX_PENDING_SAMPLES": str(max_pending), "REWARDHUB_LOG_LEVEL": "warning"}
        self.env["REWARDHUB_BENCH_WORKERS"] = str(workers)
        if mode not in ("local", "baseline"):
            prefix = f"bench{uuid.uuid4().hex[:6]}-"
            # Redis with its default settings; only the queue names are the benchmark's own
            self.env["REWARDHUB_BROKER_URL"] = f"redis://127.0.0.1:6379/14?queue_prefix={prefix}"
            self.env["REWARDHUB_MAX_TIMEOUT_S"] = "10"
        self.workers = workers
        self.logs = logs
        self.api: subprocess.Popen[bytes] | None = None
        self.worker_procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Service:
        if self.mode == "baseline":
            return self._start(
                [sys.executable, "-m", "uvicorn", "_bare_pool_app:app", "--app-dir", "bench", "--port", str(self.port)]
                + ["--log-level", "warning", "--backlog", "4096"]
            )
        command = [
            sys.executable,
            "-m",
            "rewardhub.cli",
            "serve",
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
        ]
        if self.mode != "local":
            command += ["--execution", "celery"]
            for _ in range(self.workers):
                self.worker_procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "rewardhub.cli", "worker", "--queues", "cpu", "--concurrency", "1"],
                        env=self.env,
                        cwd=ROOT,
                        stdout=self._log(f"worker{len(self.worker_procs)}"),
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        return self._start(command)

    def _start(self, command: list[str]) -> Service:
        self.api = subprocess.Popen(
            command,
            env=self.env,
            cwd=ROOT,
            stdout=self._log("api"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.api.poll() is not None:
                raise RuntimeError(f"{self.mode} service did not become ready")
            time.sleep(0.25)
        # warm every worker process: its first calls pay the import of the verifiers
        httpx.post(f"{self.url}/v1/score", json={"verifier": "math", "samples": samples(64, 0)}, timeout=120)
        return self

    def _log(self, name: str) -> int | BinaryIO:
        """Where a process's output goes: a file in ``--logs`` (kept open by the child), else nowhere."""
        if self.logs is None:
            return subprocess.DEVNULL
        self.logs.mkdir(parents=True, exist_ok=True)
        return open(self.logs / f"{self.mode}-{self.port}-{name}.log", "wb")  # noqa: SIM115

    def kill_worker(self, index: int = 0) -> None:
        root = psutil.Process(self.worker_procs[index].pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                proc.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass

    def __exit__(self, *exc: object) -> None:
        for proc in [self.api, *self.worker_procs]:
            if proc is None:
                continue
            try:
                tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
            for member in tree:
                try:
                    member.send_signal(signal.SIGKILL)
                except psutil.NoSuchProcess:
                    pass
            proc.wait()


async def drive(service: Service, args: argparse.Namespace, tally: Tally, kill_at: float | None) -> None:
    until = time.monotonic() + args.duration
    drain_until = until + args.drain
    loops = [client_loop(service.url, "single", 1, until, tally, drain_until) for _ in range(args.single_clients)]
    loops += [
        client_loop(service.url, "batch", args.batch, until, tally, drain_until) for _ in range(args.batch_clients)
    ]
    if kill_at is not None:

        async def killer() -> None:
            await asyncio.sleep(kill_at)
            service.kill_worker(0)
            tally.kills.append(time.monotonic())
            print(f"  kill -9 worker 0 (and its children) at t={kill_at:.0f}s", flush=True)

        loops.append(killer())
    await asyncio.gather(*loops)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


ROWS: list[dict] = []
LOST_WORKER_ROWS: list[dict] = []


def report(mode: str, tally: Tally, rss: RssSampler, seconds: float) -> None:
    mib = 1024 * 1024
    answered = sum(tally.statuses.values())
    ROWS.append(
        {
            "mode": mode,
            "samples_s": round(tally.samples_ok / seconds),
            "single_p99_ms": round(percentile(tally.latencies["single"], 0.99) * 1000),
            "errors": f"{tally.status_5xx} 5xx, {tally.transport_errors} transport, "
            f"{tally.samples_sent - answered} samples lost",
        }
    )
    print(f"\n== {mode} ==")
    print(
        f"  throughput      {tally.samples_ok / seconds:9.1f} samples/s ok   {tally.requests / seconds:7.1f} requests/s"
    )
    for kind in ("single", "batch"):
        values = tally.latencies[kind]
        print(
            f"  {kind:<6} latency p50 {percentile(values, 0.5) * 1000:8.1f} ms   p99 {percentile(values, 0.99) * 1000:8.1f} ms   "
            f"max {max(values, default=float('nan')) * 1000:8.1f} ms   ({len(values)} answered)"
        )
    print(
        f"  5xx {tally.status_5xx}   transport errors {tally.transport_errors}   429 {tally.status_429}   other {tally.other or 0}"
    )
    print(
        f"  API RSS  start {rss.start / mib:7.1f} MiB   peak {rss.peak / mib:7.1f} MiB   end {rss.last / mib:7.1f} MiB"
    )
    print(
        f"  samples sent {tally.samples_sent}   answered {answered} {tally.statuses}   lost {tally.samples_sent - answered}"
    )
    for message, count in sorted(tally.errors.items(), key=lambda item: -item[1])[:5]:
        print(f"    {count} x {message}")
    for kill in tally.kills:
        print(
            f"  time to recover  {time_to_recover(tally.spans, kill):6.1f} s   (kill until every request then out is answered)"
        )


def time_to_recover(spans: list[tuple[float, float]], fault: float) -> float:
    """From ``fault`` until every request that was out at that moment has its answer."""
    return max((answered for sent, answered in spans if sent <= fault <= answered), default=fault) - fault


def run_mode(mode: str, args: argparse.Namespace) -> None:
    if mode == "lost-worker":
        lost_worker(args)
        return
    kind = mode if mode in ("local", "baseline") else "celery"
    tally = Tally()
    with Service(kind, args.workers, args.max_pending, args.logs) as service:
        assert service.api is not None
        with RssSampler(service.api.pid) as rss:
            started = time.monotonic()
            asyncio.run(drive(service, args, tally, args.duration / 3 if mode == "fault" else None))
            seconds = time.monotonic() - started
    report(
        f"{mode} ({kind}, {args.workers} workers)",
        tally,
        rss,
        min(seconds, args.duration) if mode != "fault" else seconds,
    )


def big_request(url: str, n: int, kill: Callable[[], None] | None, kill_at: float) -> tuple[float, float, list]:
    """One request of ``n`` math samples; ``kill`` runs ``kill_at`` seconds in. Returns the seconds
    to the answer, from the kill to the answer, and the results."""
    timer = threading.Timer(kill_at, kill) if kill else None
    started = time.monotonic()
    if timer:
        timer.start()
    response = httpx.post(f"{url}/v1/score", json={"verifier": "math", "samples": samples(n, 0)}, timeout=3600)
    answered = time.monotonic()
    if timer:
        timer.join()
    response.raise_for_status()
    return answered - started, answered - started - kill_at, response.json()["results"]


def lost_worker(args: argparse.Namespace) -> None:
    """The operator's case of the module docstring: a clean run and a faulted run, alternating."""
    clean_s, faulted_s, recover_s, lost, agree = [], [], [], [], []
    for rep in range(args.repeat):
        print(f"  repeat {rep + 1}/{args.repeat}", flush=True)
        # a fresh service per side, so the faulted run starts with all its workers
        with Service("celery", args.workers, max(args.max_pending, args.big), args.logs) as service:
            seconds, _, reference = big_request(service.url, args.big, None, args.kill_at)
            clean_s.append(seconds)
        with Service("celery", args.workers, max(args.max_pending, args.big), args.logs) as service:
            seconds, recovered, results = big_request(
                service.url, args.big, lambda: service.kill_worker(0), args.kill_at
            )
            faulted_s.append(seconds)
            recover_s.append(recovered)
        lost.append(args.big - len(results))
        agree.append(
            sum(
                (a["status"], a["score"]) == (b["status"], b["score"]) for a, b in zip(reference, results, strict=False)
            )
        )
    print(
        f"\n== lost-worker (celery, {args.workers} workers, {args.big} math samples, kill -9 at {args.kill_at:g}s) =="
    )
    print(f"  clean run     median {statistics.median(clean_s):7.1f} s   ({', '.join(f'{x:.1f}' for x in clean_s)})")
    print(
        f"  kill -9 run   median {statistics.median(faulted_s):7.1f} s   ({', '.join(f'{x:.1f}' for x in faulted_s)})"
    )
    print(
        f"  cost of the loss     {statistics.median(faulted_s) - statistics.median(clean_s):7.1f} s (median difference)"
    )
    print(
        f"  time to recover      median {statistics.median(recover_s):.1f} s, max {max(recover_s):.1f} s (kill to answer)"
    )
    print(f"  samples lost         {lost}   verdicts equal to the clean run: {agree} of {args.big}")
    clean, faulted = statistics.median(clean_s), statistics.median(faulted_s)
    LOST_WORKER_ROWS.append(
        {
            "case": f"lost worker: one /v1/score of {args.big} math samples, celery, {args.workers} workers, "
            f"one kill -9'd {args.kill_at:g} s in ({args.repeat} runs each, alternating)",
            "baseline": "the same request without the kill (a fresh service per run)",
            "baseline_value": round(clean, 1),
            "ours_value": round(faulted, 1),
            "unit": "s to answer",
            "ratio": round(clean / faulted, 2),
            "note": f"ratio = clean / faulted time; samples lost {sum(lost)}; verdicts equal to the clean run: "
            f"{', '.join(map(str, agree))} of {args.big}; kill to answer median {statistics.median(recover_s):.1f} s",
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load per mode (default 60)")
    parser.add_argument(
        "--modes",
        default="baseline,local,celery,fault",
        help="comma-separated: baseline, local, celery, fault, lost-worker",
    )
    parser.add_argument("--big", type=int, default=40_000, help="samples of the lost-worker request")
    parser.add_argument("--kill-at", type=float, default=2.5, help="seconds into the lost-worker request")
    parser.add_argument("--repeat", type=int, default=3, help="lost-worker runs per side")
    parser.add_argument("--logs", type=Path, help="write every service process's output to a file in this folder")
    parser.add_argument("--workers", type=int, default=2, help="local pool processes / Celery worker processes")
    parser.add_argument("--single-clients", type=int, default=8, help="concurrent single-sample clients")
    parser.add_argument("--batch-clients", type=int, default=2, help="concurrent batch clients")
    parser.add_argument("--batch", type=int, default=1000, help="samples per batch request")
    parser.add_argument(
        "--max-pending", type=int, default=1500, help="the API's bound on samples in flight (429 past it)"
    )
    parser.add_argument(
        "--drain", type=float, default=120.0, help="seconds to wait for requests still out after the run"
    )
    args = parser.parse_args()
    print(
        f"bench/load.py: {args.duration:g}s per mode, {args.single_clients} single + {args.batch_clients} x {args.batch}-sample "
        f"clients, max pending {args.max_pending}, {os.cpu_count()} cores",
        flush=True,
    )
    for mode in args.modes.split(","):
        run_mode(mode.strip(), args)
    by_mode = {row["mode"].split(" ")[0]: row for row in ROWS}
    rows = []
    if "baseline" in by_mode:
        base = by_mode["baseline"]
        for name, row in by_mode.items():
            if name == "baseline":
                continue
            rows.append(
                {
                    "case": f"{args.duration:g} s of mixed load, {name} mode"
                    + (" (kill -9 a worker)" if name == "fault" else ""),
                    "baseline": "bare FastAPI + warm math-verify ProcessPoolExecutor",
                    "baseline_value": f"{base['samples_s']} ({base['errors']}; single p99 {base['single_p99_ms']} ms)",
                    "ours_value": f"{row['samples_s']} ({row['errors']}; single p99 {row['single_p99_ms']} ms)",
                    "unit": "samples/s",
                    "ratio": round(row["samples_s"] / max(1, base["samples_s"]), 2),
                    "note": "same clients, same samples, same cores",
                }
            )
    rows += LOST_WORKER_ROWS
    if rows:
        write_rows("load", rows)


if __name__ == "__main__":
    main()
